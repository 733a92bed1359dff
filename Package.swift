// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "docsync",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "docsync", targets: ["docsync"]),
        .library(name: "DocSyncKit", targets: ["DocSyncKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // The sync engine: documents, scanning, journal, state, reconciliation, remotes.
        .target(
            name: "DocSyncKit",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Collections", package: "swift-collections"),
            ]
        ),
        // The command line: parsing, output, exit codes. No sync logic lives here.
        .executableTarget(
            name: "docsync",
            dependencies: [
                "DocSyncKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "DocSyncKitTests", dependencies: ["DocSyncKit"]),
        .testTarget(name: "DocsyncCLITests", dependencies: ["DocSyncKit"]),
    ]
)
