// swift-tools-version:6.1
import PackageDescription

/// Compiler settings shared by every target. A computed var on purpose: a constant array of settings is
/// silently not applied to targets declared before it (SwiftPM #6597).
var strictSettings: [SwiftSetting] {
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}

/// Test targets skip `MemberImportVisibility`: tests name many modules' members and gain nothing from it.
var testSettings: [SwiftSetting] {
    [.enableUpcomingFeature("ExistentialAny")]
}

let package = Package(
    name: "appstore-notifications",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "iapctl", targets: ["IAPCtl"]),
        .executable(name: "ingest", targets: ["Ingest"]),
        .executable(name: "chain-verifier", targets: ["ChainVerifier"]),
        .executable(name: "entitlement-updater", targets: ["EntitlementUpdater"]),
        .executable(name: "event-publisher", targets: ["EventPublisher"]),
        .executable(name: "refund-resolver", targets: ["RefundResolver"]),
        .executable(name: "appstore-sim", targets: ["AppStoreSim"]),
        .executable(name: "customer-api", targets: ["CustomerAPI"]),
        .executable(name: "verification-benchmark", targets: ["VerificationBenchmark"]),
        .executable(name: "http-baseline", targets: ["HTTPBaseline"]),
        .executable(name: "produce-baseline", targets: ["ProduceBaseline"]),
        .executable(name: "entitlements-benchmark", targets: ["EntitlementsBenchmark"]),
        .executable(name: "lookup-benchmark", targets: ["LookupBenchmark"]),
        .library(name: "AppStoreModels", targets: ["AppStoreModels"]),
        .library(name: "JWSVerification", targets: ["JWSVerification"]),
        .library(name: "AppStoreSigning", targets: ["AppStoreSigning"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        // MARK: Shared libraries
        .target(
            name: "AppStoreModels",
            path: "Shared/AppStoreModels",
            swiftSettings: strictSettings
        ),
        .target(
            name: "JWSVerification",
            dependencies: [
                "AppStoreModels",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Shared/JWSVerification",
            swiftSettings: strictSettings
        ),
        .target(
            name: "AppStoreSigning",
            dependencies: [
                "AppStoreModels",
                "JWSVerification",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Shared/AppStoreSigning",
            swiftSettings: strictSettings
        ),

        .systemLibrary(
            name: "CRdKafka",
            path: "Shared/CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        .target(
            name: "RdKafka",
            dependencies: [
                "CRdKafka",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/RdKafka",
            swiftSettings: strictSettings
        ),

        .target(
            name: "ServiceRuntime",
            dependencies: [
                "RdKafka",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/ServiceRuntime",
            swiftSettings: strictSettings
        ),

        .target(
            name: "NotificationPipeline",
            dependencies: [
                "AppStoreAPI", "AppStoreModels", "Entitlements", "JWSVerification", "RdKafka", "ServiceRuntime",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Shared/NotificationPipeline",
            swiftSettings: strictSettings
        ),

        .target(
            name: "Storage",
            dependencies: [
                "AppStoreAPI", "AppStoreModels", "Entitlements", "JWSVerification", "NotificationPipeline",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/Storage",
            swiftSettings: strictSettings
        ),

        .target(
            name: "Entitlements",
            dependencies: ["AppStoreModels", "JWSVerification", .product(name: "Crypto", package: "swift-crypto")],
            path: "Shared/Entitlements",
            exclude: ["Schemas"],
            swiftSettings: strictSettings
        ),

        .target(
            name: "AppStoreAPI",
            dependencies: [
                "AppStoreModels", "JWSVerification",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Shared/AppStoreAPI",
            swiftSettings: strictSettings
        ),

        // MARK: Executables
        .executableTarget(
            name: "IAPCtl",
            dependencies: [
                "AppStoreAPI",
                "AppStoreModels",
                "Entitlements",
                "JWSVerification",
                "NotificationPipeline",
                "RdKafka",
                "ServiceRuntime",
                "Storage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Services/IAPCtl",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "Ingest",
            dependencies: [
                "AppStoreModels", "JWSVerification", "NotificationPipeline", "RdKafka", "ServiceRuntime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Services/Ingest",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ChainVerifier",
            dependencies: [
                "AppStoreModels", "JWSVerification", "NotificationPipeline", "RdKafka", "ServiceRuntime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/ChainVerifier",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "EntitlementUpdater",
            dependencies: [
                "AppStoreModels", "Entitlements", "NotificationPipeline", "RdKafka", "ServiceRuntime", "Storage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/EntitlementUpdater",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "EventPublisher",
            dependencies: [
                "NotificationPipeline", "RdKafka", "ServiceRuntime", "Storage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/EventPublisher",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "RefundResolver",
            dependencies: [
                "AppStoreAPI", "AppStoreModels", "Entitlements", "JWSVerification", "NotificationPipeline", "RdKafka", "ServiceRuntime",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/RefundResolver",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "AppStoreSim",
            dependencies: [
                "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "JWSVerification",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Services/AppStoreSim",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "VerificationBenchmark",
            dependencies: [
                "AppStoreModels",
                "JWSVerification",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/VerificationBenchmark",
            swiftSettings: strictSettings
        ),

        .executableTarget(
            name: "ProduceBaseline",
            dependencies: ["RdKafka", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/ProduceBaseline",
            swiftSettings: strictSettings
        ),

        .executableTarget(
            name: "HTTPBaseline",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            path: "Benchmarks/HTTPBaseline",
            swiftSettings: strictSettings
        ),

        .executableTarget(
            name: "EntitlementsBenchmark",
            dependencies: [
                "NotificationPipeline", "RdKafka", "Storage", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Benchmarks/EntitlementsBenchmark",
            swiftSettings: strictSettings
        ),

        // MARK: Tests
        .target(
            name: "TestSupport",
            dependencies: [
                "AppStoreModels", "JWSVerification", "AppStoreSigning", "Entitlements", "NotificationPipeline", "RdKafka", "Storage",
                .product(name: "Logging", package: "swift-log"), .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: testSettings
        ),
        .executableTarget(
            name: "LookupBenchmark",
            dependencies: [
                "AppStoreModels", "NotificationPipeline", "Storage", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/LookupBenchmark",
            swiftSettings: testSettings
        ),
        .executableTarget(
            name: "CustomerAPI",
            dependencies: [
                "AppStoreAPI", "AppStoreModels", "Entitlements", "JWSVerification", "NotificationPipeline", "RdKafka", "ServiceRuntime", "Storage",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Services/CustomerAPI",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "AppStoreModelsTests",
            dependencies: ["AppStoreModels", "TestSupport"],
            path: "Tests/AppStoreModelsTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "JWSVerificationTests",
            dependencies: [
                "AppStoreModels", "JWSVerification", "AppStoreSigning", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/JWSVerificationTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "RdKafkaTests",
            dependencies: ["RdKafka", "TestSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/RdKafkaTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "IngestTests",
            dependencies: [
                "Ingest", "AppStoreModels", "AppStoreSigning", "JWSVerification", "NotificationPipeline", "RdKafka", "ServiceRuntime",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/IngestTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "ChainVerifierTests",
            dependencies: [
                "ChainVerifier", "AppStoreModels", "AppStoreSigning", "JWSVerification", "NotificationPipeline", "RdKafka",
                "ServiceRuntime", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/ChainVerifierTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "ServiceRuntimeTests",
            dependencies: [
                "RdKafka", "ServiceRuntime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/ServiceRuntimeTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "NotificationPipelineTests",
            dependencies: [
                "NotificationPipeline", "AppStoreModels", "JWSVerification", "TestSupport", "RdKafka", "ServiceRuntime",
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Tests/NotificationPipelineTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "StorageTests",
            dependencies: [
                "Storage", "TestSupport", "AppStoreModels", "Entitlements", "JWSVerification", "NotificationPipeline",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/StorageTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "EntitlementsTests",
            dependencies: ["Entitlements", "AppStoreModels", "JWSVerification", "TestSupport", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/EntitlementsTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "EntitlementServicesTests",
            dependencies: [
                "EntitlementUpdater", "EventPublisher", "AppStoreModels", "Entitlements", "JWSVerification", "NotificationPipeline",
                "RdKafka", "ServiceRuntime", "Storage", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/EntitlementServicesTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "AppStoreAPITests",
            dependencies: ["AppStoreAPI", "JWSVerification", "TestSupport", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/AppStoreAPITests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "RecoveryTests",
            dependencies: [
                "AppStoreSim", "RefundResolver", "Ingest", "ChainVerifier", "EntitlementUpdater", "EventPublisher", "CustomerAPI",
                "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "Entitlements", "JWSVerification", "NotificationPipeline", "RdKafka",
                "ServiceRuntime", "Storage", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/RecoveryTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "CustomerAPITests",
            dependencies: [
                "CustomerAPI", "Entitlements", "JWSVerification", "NotificationPipeline", "ServiceRuntime", "Storage", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Tests/CustomerAPITests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "IAPCtlTests",
            dependencies: ["IAPCtl", "AppStoreSigning", "NotificationPipeline", "TestSupport"],
            path: "Tests/IAPCtlTests",
            swiftSettings: testSettings
        ),
    ]
)
