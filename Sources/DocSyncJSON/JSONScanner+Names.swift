// Repeated member names (`scanDocument`, or `validate` with `uniqueMemberNames`): an open
// object's names are compared byte for byte while it has a few, without allocating; a
// large object's go into a set, so the check stays linear.

extension JSONScanner.Scanner {
    /// A member name as it is in the text: the bytes between its quotes.
    struct NameToken {
        var content: Range<Int>
        var escaped: Bool
    }

    /// An open object's member names: `names[firstName...]` while it has few, compared
    /// byte for byte without decoding or allocating (most objects have a handful); past
    /// `namesCompared`, a set of the decoded names, so a huge object stays linear.
    /// Plain data, so the stack of them costs no reference counting.
    struct OpenObject {
        var firstName: Int
        /// Index of its set in `nameSets`, -1 while its names are compared directly.
        var nameSet: Int
        /// One bit per name (from its length and end bytes): a name whose bit is not set
        /// is new without comparing. All ones once a name holds an escape.
        var seen: UInt64
    }

    static let namesCompared = 16

    /// An object just opened with this first member name.
    @inline(__always) mutating func openObjectNames(first name: NameToken) {
        openObjects.append(OpenObject(firstName: names.count, nameSet: -1, seen: summary(name)))
        names.append(name)
    }

    /// Adds the name of the innermost open object's second or later member; an error at
    /// the name's token if the object already has a member of that name.
    @inline(__always) mutating func noteName(_ name: NameToken, at start: Int) throws(JSONSyntaxError) {
        let object = openObjects.count - 1
        let setIndex = openObjects[object].nameSet
        if setIndex >= 0 {
            guard nameSets[setIndex].insert(decodedName(name)).inserted else { throw duplicate(name, at: start) }
            return
        }
        let first = openObjects[object].firstName
        let bit = summary(name)
        if openObjects[object].seen & bit != 0 {
            for i in first..<names.count where sameName(names[i], name) {
                throw duplicate(name, at: start)
            }
        }
        openObjects[object].seen |= bit
        names.append(name)
        if names.count - first > Self.namesCompared {
            nameSets.append(Set(names[first...].map(decodedName)))
            openObjects[object].nameSet = nameSets.count - 1
            names.removeLast(names.count - first)
        }
    }

    @inline(__always) mutating func closeObjectNames() {
        let object = openObjects.removeLast()
        if object.nameSet >= 0 {
            // Sets are made in the order objects open, so the innermost one's is last.
            nameSets.removeLast()
        } else {
            names.removeLast(names.count - object.firstName)
        }
    }

    /// The name's bit in `OpenObject.seen`: equal names have equal bits (an escaped name
    /// may equal any other, so it has them all).
    @inline(__always) private func summary(_ name: NameToken) -> UInt64 {
        if name.escaped { return ~0 }
        let n = name.content.count
        guard n > 0 else { return 1 }
        let mix = n &* 31 &+ Int(buf[name.content.lowerBound]) &* 7 &+ Int(buf[name.content.upperBound - 1])
        return 1 << UInt64(mix & 63)
    }

    /// Whether two names are the same string: byte for byte, decoding only when one
    /// holds an escape.
    private func sameName(_ a: NameToken, _ b: NameToken) -> Bool {
        if a.escaped || b.escaped { return decodedName(a) == decodedName(b) }
        guard a.content.count == b.content.count else { return false }
        var i = a.content.lowerBound, j = b.content.lowerBound
        while i < a.content.upperBound {
            if buf[i] != buf[j] { return false }
            i += 1
            j += 1
        }
        return true
    }

    /// A name's UTF-8 with escapes resolved: compared as bytes, because `String`'s `==`
    /// would also equate canonically equivalent names ("é" and "e\u0301"), which differ.
    private func decodedName(_ name: NameToken) -> [UInt8] {
        name.escaped ? Array(decodeString(name.content, escaped: true).utf8) : Array(buf[name.content])
    }

    private func duplicate(_ name: NameToken, at start: Int) -> JSONSyntaxError {
        error("duplicate member name \"\(decodeString(name.content, escaped: name.escaped))\"", at: start)
    }
}
