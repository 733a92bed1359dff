// libFuzzer target `scanner`: JSONScanner.validate / scanDocument on arbitrary bytes.
//
// Properties checked:
// - validate agrees with an independent recursive-descent validator (ReferenceJSON) on
//   whether the text is JSON (when the nesting is shallow enough for the reference).
// - Every error is positioned: 0 <= offset <= count, line/column match
//   JSONScanner.location(of:), reason is non-empty, a NUL is blamed only where one is.
// - scanDocument succeeds exactly when validate does and the top level is an object
//   without a repeated "refId"/"changesetId"; when both fail they report the same error.
// - A scanned document's members are sane: '{' and '}' are the first and last
//   non-whitespace bytes, members are in order inside the braces, separated only by
//   whitespace and ':' / ',', each key and value is valid JSON on its own, kinds are
//   right, decoded keys and string values match an independent decoder.

@_cdecl("LLVMFuzzerTestOneInput")
public func scannerFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = fuzzInput(data, size)
    checkScanner(bytes)
    return 0
}
