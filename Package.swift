// swift-tools-version:6.1
import PackageDescription

/// Layers, bottom up (see docs/ARCHITECTURE.md):
/// ShelfModel → ShelfMarkdown → ShelfStore → ShelfImport / ShelfSync → ShelfFS (over FuseKit over CFuse) → shelf;
/// ShelfSystem (what talks to Linux: atomic writes, inotify, worker threads) under ShelfStore and FuseKit.
/// Linux only (libfuse3, inotify, Linux xattr calls): no other platform is declared.
let package = Package(
    name: "Shelf",
    products: [
        .executable(name: "shelf", targets: ["shelf"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
        .package(url: "https://github.com/yaslab/CSV.swift", exact: "2.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/x-sheep/swift-property-based", exact: "2.0.1"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
    ],
    targets: [
        .systemLibrary(name: "CFuse", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        .target(name: "ShelfSystem"),
        .target(name: "FuseKit", dependencies: [
            "CFuse", "ShelfSystem",
            .product(name: "Logging", package: "swift-log"),
        ]),
        /// What every test target shares, once: temporary folders, polling with a deadline,
        /// commands with deadlines, and the real-mount harness (temp mountpoints, deadlines on
        /// every file operation, unmounting that always happens, records for scripts/test).
        .target(name: "TestSupport", dependencies: ["FuseKit", "ShelfSystem", "ShelfModel", "ShelfStore", .product(name: "GRDB", package: "GRDB.swift")],
                path: "Tests/Support/TestSupport"),
        /// The swift-testing side of the test support: the trait every suite carries, which keeps a
        /// failing test's scratch folders and removes a passing one's.
        .target(name: "TestTraits", dependencies: ["TestSupport"], path: "Tests/Support/TestTraits"),
        /// Libraries ("devices") sharing one cloud, folder or PostgreSQL, delivered at once or late
        /// as a file-sync tool would: the one fixture of every test with more than one device.
        .target(name: "TestDevices", dependencies: [
            "TestSupport", "ShelfModel", "ShelfStore", "ShelfSync",
            .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/Support/TestDevices"),
        /// The commit a release build records (`shelf --version`), set by scripts/package.
        .target(name: "CShelfBuild"),
        .target(name: "ShelfModel"),
        .target(name: "ShelfMarkdown", dependencies: [
            "ShelfModel",
            .product(name: "Yams", package: "Yams"),
        ]),
        .target(name: "ShelfStore", dependencies: [
            "ShelfModel", "ShelfMarkdown", "ShelfSystem",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "GRDBSQLite", package: "GRDB.swift"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "ShelfImport", dependencies: [
            "ShelfModel", "ShelfMarkdown", "ShelfStore", "ShelfSystem",
            .product(name: "CSV", package: "CSV.swift"),
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        /// A library shared with other devices through a cloud copy: the cloud protocol and its
        /// backends, the sync engine, three-way merges.
        .target(name: "ShelfSync", dependencies: [
            "ShelfModel", "ShelfMarkdown", "ShelfStore", "ShelfSystem",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "ShelfFS", dependencies: [
            "FuseKit", "ShelfModel", "ShelfMarkdown", "ShelfStore", "ShelfSystem",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "shelf", dependencies: [
            "ShelfModel", "ShelfMarkdown", "ShelfStore", "ShelfImport", "ShelfSync", "ShelfFS", "FuseKit", "ShelfSystem", "CShelfBuild",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        /// Micro-benchmarks behind scripts/bench-core (codec speed); not part of the test suite.
        .executableTarget(name: "shelf-bench", dependencies: ["ShelfModel", "ShelfMarkdown", "ShelfSystem"]),
        /// The sync load behind scripts/bench-sync-load (many devices, one cloud); not part of the test suite.
        .executableTarget(name: "shelf-load", dependencies: [
            "ShelfModel", "ShelfStore", "ShelfSync", "TestSupport",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        /// The PostgreSQL sizing behind scripts/bench-postgres (a cloud of a million rows); not part of the test suite.
        .executableTarget(name: "shelf-cloud-size", dependencies: [
            "ShelfSync", "TestSupport",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        .testTarget(name: "ShelfMarkdownTests", dependencies: [
            "TestTraits", "ShelfModel", "ShelfMarkdown", "TestSupport",
            .product(name: "PropertyBased", package: "swift-property-based"),
            .product(name: "Yams", package: "Yams"),
        ]),
        .testTarget(name: "ShelfStoreTests", dependencies: ["TestTraits", "ShelfModel", "ShelfMarkdown", "ShelfStore", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "ShelfImportTests", dependencies: ["TestTraits", "ShelfModel", "ShelfMarkdown", "ShelfStore", "ShelfImport", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ShelfSyncTests", dependencies: [
            "TestTraits", "TestDevices", "ShelfSync", "ShelfStore", "ShelfModel", "ShelfMarkdown", "TestSupport",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "ShelfSystemTests", dependencies: ["TestTraits", "ShelfSystem", "TestSupport"]),
        .testTarget(name: "FuseKitTests", dependencies: ["TestTraits", "FuseKit", "CFuse", "ShelfSystem", "TestSupport"]),
        .testTarget(name: "ShelfFSTests", dependencies: ["TestTraits", "TestDevices", "ShelfFS", "ShelfStore", "ShelfSync", "ShelfModel", "ShelfMarkdown", "FuseKit", "ShelfSystem", "TestSupport"]),
        .testTarget(name: "ShelfCLITests", dependencies: ["TestTraits", "shelf", "ShelfStore", "ShelfModel", "ShelfMarkdown", "TestSupport"]),
    ]
)
