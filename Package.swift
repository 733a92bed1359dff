// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "docsync",
    // Built and tested on Linux only (inotify, Glibc's sigaction): no other platform is claimed.
    products: [
        .executable(name: "docsync", targets: ["docsync"]),
        .library(name: "DocSyncKit", targets: ["DocSyncKit"]),
        .library(name: "DocSyncSchema", targets: ["DocSyncSchema"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0")
    ],
    targets: [
        // libgit2 from Debian's libgit2-dev, found through pkg-config.
        .systemLibrary(
            name: "CLibGit2",
            pkgConfig: "libgit2",
            providers: [.apt(["libgit2-dev"])]
        ),
        // zlib (Debian's zlib1g-dev, which libgit2-dev depends on): compresses the objects
        // of the git packs docsync writes itself.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Fixed-signature wrappers for libgit2's variadic git_libgit2_opts.
        .target(name: "GitShim", dependencies: ["CLibGit2"]),
        // JSON documents without the engine: scanning and id stamping that keep every byte,
        // the value model, the writer and the three-way field merge. Knows nothing of
        // files, journals or remotes, so the compiler holds that layering.
        .target(
            name: "DocSyncJSON",
            dependencies: [.product(name: "Collections", package: "swift-collections")]
        ),
        // JSON Schema validation (drafts 2020-12 and 07) over `JSONValue`: compile a schema
        // once, validate values into every error with its JSON pointer. Pure functions over
        // values; knows nothing of files or sync.
        .target(
            name: "DocSyncSchema",
            dependencies: ["DocSyncJSON", .product(name: "Collections", package: "swift-collections")]
        ),
        // The sync engine: scanning the tree, journal, state, reconciliation, remotes.
        .target(
            name: "DocSyncKit",
            dependencies: [
                "DocSyncJSON",
                "DocSyncSchema",
                "CLibGit2",
                "CZlib",
                "GitShim",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Collections", package: "swift-collections")
            ]
        ),
        // The command line: parsing, output, exit codes. No sync logic lives here.
        .executableTarget(
            name: "docsync",
            dependencies: [
                "DocSyncKit",
                "DocSyncJSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        .testTarget(
            name: "DocSyncKitTests", dependencies: ["DocSyncKit", "DocSyncJSON", "GitShim"],
            exclude: ["MergeConformance"]),
        // Crypto: the model check reads a folder remote's objects by their SHA-256 itself.
        .testTarget(
            name: "DocsyncCLITests",
            dependencies: ["DocSyncKit", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(
            name: "DocSyncSchemaTests",
            dependencies: ["DocSyncSchema", "DocSyncJSON"],
            exclude: ["JSON-Schema-Test-Suite"]
        )
    ]
)
