// swift-tools-version:6.1
import PackageDescription

// The package is one table: each module with its kind, its folder and exactly the modules its sources import
// (Tests/Layering/check_layers.py fails the test command when a target imports something it does not declare,
// declares something it does not import, or breaks a layer rule). Products follow from the table.

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

/// Where each module that comes from another package is found: module name → (product, package).
let external: [String: (product: String, package: String)] = [
    "ArgumentParser": ("ArgumentParser", "swift-argument-parser"),
    "AsyncHTTPClient": ("AsyncHTTPClient", "async-http-client"),
    "Crypto": ("Crypto", "swift-crypto"),
    "HTTPTypes": ("HTTPTypes", "swift-http-types"),
    "Histogram": ("Histogram", "hdrhistogram-swift"),
    "Hummingbird": ("Hummingbird", "hummingbird"),
    "HummingbirdCore": ("HummingbirdCore", "hummingbird"),
    "HummingbirdTesting": ("HummingbirdTesting", "hummingbird"),
    "InMemoryTracing": ("InMemoryTracing", "swift-distributed-tracing"),
    "Logging": ("Logging", "swift-log"),
    "Metrics": ("Metrics", "swift-metrics"),
    "OTel": ("OTel", "swift-otel"),
    "ServiceContextModule": ("ServiceContextModule", "swift-service-context"),
    "Tracing": ("Tracing", "swift-distributed-tracing"),
    "Mustache": ("Mustache", "swift-mustache"),
    "NIOCore": ("NIOCore", "swift-nio"),
    "NIOEmbedded": ("NIOEmbedded", "swift-nio"),
    "NIOHTTP1": ("NIOHTTP1", "swift-nio"),
    "NIOHTTPTypes": ("NIOHTTPTypes", "swift-nio-extras"),
    "NIOPosix": ("NIOPosix", "swift-nio"),
    "NIOSSL": ("NIOSSL", "swift-nio-ssl"),
    "PostgresNIO": ("PostgresNIO", "postgres-nio"),
    "Prometheus": ("Prometheus", "swift-prometheus"),
    "ServiceLifecycle": ("ServiceLifecycle", "swift-service-lifecycle"),
    "SwiftASN1": ("SwiftASN1", "swift-asn1"),
    "UnixSignals": ("UnixSignals", "swift-service-lifecycle"),
    "X509": ("X509", "swift-certificates"),
]

/// What a module is.
enum Kind {
    /// A library module; `product` publishes it to other packages.
    case library(product: Bool = false)
    /// An executable, published as the product `name`.
    case executable(String)
    /// A test-only library (fixtures, helpers).
    case testSupport
    /// A test bundle.
    case tests
    /// A C library found through pkg-config.
    case system
}

/// One row of the table.
struct Module {
    let name: String
    let kind: Kind
    let path: String
    let imports: [String]
    /// Files of the module's folder built into it (SwiftPM resources).
    var resources: [Resource] = []
}

let modules: [Module] = [
    // MARK: Shared: models ← records ← storage and Kafka ← services
    Module(
        name: "AppStoreModels", kind: .library(product: true), path: "Shared/AppStoreModels", imports: ["SwiftASN1"]),
    Module(
        name: "JWSVerification", kind: .library(product: true), path: "Shared/JWSVerification",
        imports: ["AppStoreModels", "Crypto", "SwiftASN1", "X509"]),
    Module(
        name: "AppStoreSigning", kind: .library(product: true), path: "Shared/AppStoreSigning",
        imports: ["AppStoreModels", "Crypto", "JWSVerification", "SwiftASN1", "X509"]),
    Module(name: "PipelineRecords", kind: .library(), path: "Shared/PipelineRecords", imports: ["AppStoreModels"]),
    Module(
        name: "Entitlements", kind: .library(), path: "Shared/Entitlements",
        imports: ["AppStoreModels", "Crypto", "JWSVerification", "PipelineRecords"]),
    Module(
        name: "EntitlementDecisions", kind: .library(), path: "Shared/EntitlementDecisions",
        imports: ["AppStoreModels", "Entitlements", "PipelineRecords"]),
    Module(
        name: "AppStoreAPI", kind: .library(), path: "Shared/AppStoreAPI",
        imports: [
            "AppStoreModels", "AsyncHTTPClient", "Crypto", "JWSVerification", "Logging", "NIOCore", "NIOHTTP1",
            "RateAndRetry",
        ]),
    Module(name: "RateAndRetry", kind: .library(), path: "Shared/RateAndRetry", imports: []),
    Module(name: "Webhooks", kind: .library(), path: "Shared/Webhooks", imports: ["Crypto"]),
    Module(name: "CRdKafka", kind: .system, path: "Shared/CRdKafka", imports: []),
    Module(
        name: "RdKafka", kind: .library(), path: "Shared/RdKafka", imports: ["CRdKafka", "Logging", "ServiceLifecycle"]),
    Module(
        name: "ServiceRuntime", kind: .library(), path: "Shared/ServiceRuntime",
        imports: [
            "HTTPTypes", "Hummingbird", "HummingbirdCore", "Logging", "Metrics", "NIOCore", "NIOHTTP1", "NIOHTTPTypes",
            "NIOPosix", "OTel", "Prometheus", "RateAndRetry",
            "RdKafka", "ServiceContextModule", "ServiceLifecycle", "Tracing", "UnixSignals",
        ]),
    Module(
        name: "Storage", kind: .library(), path: "Shared/Storage",
        imports: [
            "AppStoreModels", "Crypto", "EntitlementDecisions", "Entitlements", "JWSVerification", "Logging",
            "NIOPosix", "NIOSSL",
            "PipelineRecords",
            "PostgresNIO",
        ]),
    Module(
        name: "NotificationPipeline", kind: .library(), path: "Shared/NotificationPipeline",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AsyncHTTPClient", "Crypto", "Entitlements", "JWSVerification", "Logging",
            "NIOCore", "NIOHTTP1", "PipelineRecords", "RdKafka", "ServiceLifecycle", "ServiceRuntime", "Storage",
            "X509",
        ]),

    // MARK: Executables
    Module(
        name: "Ingest", kind: .executable("ingest"), path: "Services/Ingest",
        imports: [
            "AppStoreModels", "Hummingbird", "JWSVerification", "Logging", "NIOCore", "NotificationPipeline",
            "PipelineRecords", "Prometheus", "RdKafka", "ServiceContextModule", "ServiceRuntime",
        ]),
    Module(
        name: "ChainVerifier", kind: .executable("chain-verifier"), path: "Services/ChainVerifier",
        imports: [
            "AppStoreModels", "Hummingbird", "JWSVerification", "Logging", "NIOCore", "NotificationPipeline",
            "PipelineRecords", "Prometheus", "RdKafka", "ServiceContextModule", "ServiceRuntime", "Tracing",
        ]),
    Module(
        name: "EntitlementUpdater", kind: .executable("entitlement-updater"), path: "Services/EntitlementUpdater",
        imports: [
            "AppStoreModels", "EntitlementDecisions", "Entitlements", "Hummingbird", "Logging", "NotificationPipeline",
            "PipelineRecords",
            "PostgresNIO",
            "Prometheus", "RdKafka", "ServiceLifecycle", "ServiceRuntime", "Storage", "Tracing",
        ]),
    Module(
        name: "EventPublisher", kind: .executable("event-publisher"), path: "Services/EventPublisher",
        imports: [
            "Hummingbird", "Logging", "NotificationPipeline", "PipelineRecords", "PostgresNIO", "Prometheus",
            "RateAndRetry",
            "RdKafka", "ServiceLifecycle", "ServiceRuntime", "Storage", "Tracing",
        ]),
    Module(
        name: "RefundResolver", kind: .executable("refund-resolver"), path: "Services/RefundResolver",
        imports: [
            "AppStoreAPI", "AppStoreModels", "Entitlements", "Hummingbird", "Logging", "NotificationPipeline",
            "PipelineRecords",
            "Prometheus", "RateAndRetry", "RdKafka", "ServiceContextModule", "ServiceLifecycle", "ServiceRuntime",
            "Tracing",
        ]),
    Module(
        name: "CustomerAPI", kind: .executable("customer-api"), path: "Services/CustomerAPI",
        imports: [
            "AppStoreAPI", "AppStoreModels", "Crypto", "Entitlements", "HTTPTypes", "Hummingbird", "JWSVerification",
            "Logging",
            "Mustache", "NotificationPipeline", "PipelineRecords", "PostgresNIO", "Prometheus", "RdKafka",
            "ServiceLifecycle",
            "ServiceRuntime", "Storage", "Webhooks",
        ],
        // The OpenAPI description it serves: docs/openapi.json (linked into the folder), embedded at build time.
        resources: [.embedInCode("openapi.json")]),
    Module(
        name: "RetentionMessaging", kind: .executable("retention-messaging"), path: "Services/RetentionMessaging",
        imports: [
            "AppStoreAPI", "AppStoreModels", "Hummingbird", "JWSVerification", "Logging", "NIOCore",
            "NotificationPipeline", "PipelineRecords", "PostgresNIO", "Prometheus", "RdKafka", "ServiceLifecycle",
            "ServiceRuntime", "Storage",
        ]),
    Module(
        name: "WebhookDispatcher", kind: .executable("webhook-dispatcher"), path: "Services/WebhookDispatcher",
        imports: [
            "AsyncHTTPClient", "Hummingbird", "Logging", "NIOCore", "NIOHTTP1", "NotificationPipeline",
            "PipelineRecords",
            "PostgresNIO", "Prometheus", "RateAndRetry", "RdKafka", "ServiceLifecycle", "ServiceRuntime", "Storage",
            "Webhooks",
        ]),
    Module(
        name: "IAPCtl", kind: .executable("iapctl"), path: "Services/IAPCtl",
        imports: [
            "AppStoreAPI", "AppStoreModels", "ArgumentParser", "AsyncHTTPClient", "Entitlements", "JWSVerification",
            "Logging", "NIOCore", "NIOHTTP1",
            "NotificationPipeline", "PipelineRecords", "PostgresNIO", "RdKafka", "ServiceRuntime", "Storage",
            "UnixSignals",
        ]),
    Module(
        name: "AppStoreSimKit", kind: .library(), path: "Services/AppStoreSimKit",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "ArgumentParser", "AsyncHTTPClient", "Crypto",
            "HTTPTypes", "Histogram",
            "Hummingbird", "JWSVerification", "Logging", "NIOCore", "NIOHTTP1", "NIOPosix", "ServiceLifecycle",
            "UnixSignals", "X509",
        ]),
    Module(
        name: "AppStoreSim", kind: .executable("appstore-sim"), path: "Services/AppStoreSim",
        imports: ["AppStoreSimKit"]),

    // MARK: Benchmarks
    Module(
        name: "VerificationBenchmark", kind: .executable("verification-benchmark"),
        path: "Benchmarks/VerificationBenchmark",
        imports: [
            "AppStoreModels", "Crypto", "Entitlements", "JWSVerification", "NotificationPipeline", "PipelineRecords",
            "RdKafka",
        ]),
    Module(
        name: "ProduceBaseline", kind: .executable("produce-baseline"), path: "Benchmarks/ProduceBaseline",
        imports: ["Logging", "RdKafka"]),
    Module(
        name: "HTTPBaseline", kind: .executable("http-baseline"), path: "Benchmarks/HTTPBaseline",
        imports: ["Hummingbird"]),
    Module(
        name: "EntitlementsBenchmark", kind: .executable("entitlements-benchmark"),
        path: "Benchmarks/EntitlementsBenchmark",
        imports: [
            "EntitlementDecisions", "Logging", "NotificationPipeline", "PipelineRecords", "PostgresNIO", "RdKafka",
            "Storage", "TestSupport",
        ]),
    Module(
        name: "LookupBenchmark", kind: .executable("lookup-benchmark"), path: "Benchmarks/LookupBenchmark",
        imports: [
            "AppStoreModels", "AsyncHTTPClient", "Logging", "NIOCore", "NIOHTTP1", "NotificationPipeline", "Storage",
            "TestSupport",
        ]),

    Module(
        name: "RetentionBenchmark", kind: .executable("retention-benchmark"), path: "Benchmarks/RetentionBenchmark",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "Crypto", "Logging", "NIOCore", "NIOHTTP1", "Storage",
            "TestSupport",
        ]),

    Module(
        name: "WebhookBenchmark", kind: .executable("webhook-benchmark"), path: "Benchmarks/WebhookBenchmark",
        imports: ["HTTPTypes", "Hummingbird", "Logging", "PostgresNIO", "RdKafka", "Storage", "Webhooks"]),

    // MARK: Tests
    Module(
        name: "TestSupport", kind: .testSupport, path: "Tests/TestSupport",
        imports: [
            "AppStoreModels", "AppStoreSigning", "AsyncHTTPClient", "Entitlements", "HTTPTypes", "Histogram",
            "JWSVerification", "Logging", "NIOCore", "NIOHTTP1", "NIOPosix", "NotificationPipeline", "PipelineRecords",
            "PostgresNIO", "RdKafka", "Storage", "X509",
        ]),
    Module(
        name: "AppStoreModelsTests", kind: .tests, path: "Tests/AppStoreModelsTests",
        imports: ["AppStoreModels", "TestSupport"]),
    Module(
        name: "JWSVerificationTests", kind: .tests, path: "Tests/JWSVerificationTests",
        imports: ["AppStoreModels", "AppStoreSigning", "Crypto", "JWSVerification", "TestSupport", "X509"]),
    Module(
        name: "RdKafkaTests", kind: .tests, path: "Tests/RdKafkaTests",
        imports: ["Logging", "RdKafka", "ServiceRuntime", "TestSupport"]),
    Module(
        name: "IngestTests", kind: .tests, path: "Tests/IngestTests",
        imports: [
            "AppStoreModels", "AppStoreSigning", "Crypto", "Hummingbird", "HummingbirdTesting", "Ingest",
            "JWSVerification", "Logging", "NIOEmbedded",
            "NotificationPipeline", "PipelineRecords", "Prometheus", "RdKafka", "ServiceRuntime", "TestSupport", "X509",
        ]),
    Module(
        name: "ChainVerifierTests", kind: .tests, path: "Tests/ChainVerifierTests",
        imports: [
            "AppStoreModels", "AppStoreSigning", "JWSVerification", "Logging",
            "NotificationPipeline",
            "PipelineRecords", "RdKafka", "ServiceRuntime", "TestSupport",
        ]),
    Module(
        name: "ServiceRuntimeTests", kind: .tests, path: "Tests/ServiceRuntimeTests",
        imports: [
            "HTTPTypes", "Hummingbird", "HummingbirdTesting", "InMemoryTracing", "JWSVerification", "Logging",
            "NIOCore", "NIOEmbedded", "NIOHTTPTypes", "OTel", "Prometheus", "RateAndRetry", "RdKafka",
            "ServiceContextModule", "ServiceRuntime", "TestSupport", "Tracing",
        ]),
    Module(
        name: "NotificationPipelineTests", kind: .tests, path: "Tests/NotificationPipelineTests",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "Crypto", "JWSVerification", "Logging",
            "NotificationPipeline", "PipelineRecords", "RdKafka", "ServiceRuntime", "Storage", "TestSupport", "X509",
        ]),
    Module(
        name: "StorageTests", kind: .tests, path: "Tests/StorageTests",
        imports: [
            "AppStoreModels", "Crypto", "EntitlementDecisions", "Entitlements", "JWSVerification", "Logging",
            "NotificationPipeline",
            "PipelineRecords",
            "PostgresNIO", "Storage", "TestSupport",
        ]),
    Module(
        name: "EntitlementsTests", kind: .tests, path: "Tests/EntitlementsTests",
        imports: ["AppStoreModels", "Crypto", "Entitlements", "JWSVerification", "PipelineRecords", "TestSupport"]),
    Module(
        name: "EntitlementDecisionsTests", kind: .tests, path: "Tests/EntitlementDecisionsTests",
        imports: ["AppStoreModels", "EntitlementDecisions", "Entitlements", "PipelineRecords", "TestSupport"]),
    Module(
        name: "EntitlementServicesTests", kind: .tests, path: "Tests/EntitlementServicesTests",
        imports: [
            "AppStoreModels", "AppStoreSigning", "EntitlementUpdater", "Entitlements",
            "JWSVerification", "Logging",
            "NotificationPipeline", "PipelineRecords", "PostgresNIO", "Prometheus", "RdKafka",
            "ServiceRuntime",
            "Storage", "TestSupport",
        ]),
    Module(
        name: "AppStoreAPITests", kind: .tests, path: "Tests/AppStoreAPITests",
        imports: ["AppStoreAPI", "AppStoreModels", "Crypto", "JWSVerification", "TestSupport"]),
    Module(
        name: "WebhooksTests", kind: .tests, path: "Tests/WebhooksTests", imports: ["TestSupport", "Webhooks"]),
    Module(
        name: "SystemTestSupport", kind: .testSupport, path: "Tests/SystemTests/Harness",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "AppStoreSimKit", "AsyncHTTPClient", "Crypto",
            "JWSVerification", "Logging", "NotificationPipeline", "PipelineRecords", "PostgresNIO", "RdKafka",
            "ServiceLifecycle", "Storage", "TestSupport",
        ]),
    Module(
        name: "SystemAppStoreAPITests", kind: .tests, path: "Tests/SystemTests/AppStoreAPI",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "AppStoreSimKit", "AsyncHTTPClient", "Crypto",
            "JWSVerification", "NotificationPipeline", "PipelineRecords", "SystemTestSupport", "TestSupport",
        ]),
    Module(
        name: "SystemAppStoreSimTests", kind: .tests, path: "Tests/SystemTests/AppStoreSim",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "AppStoreSimKit", "AsyncHTTPClient", "Crypto",
            "JWSVerification", "NIOCore", "NIOHTTP1", "NIOPosix", "NotificationPipeline", "PipelineRecords", "RdKafka",
            "ServiceRuntime", "SystemTestSupport", "TestSupport",
        ]),
    Module(
        name: "SystemCustomerAPITests", kind: .tests, path: "Tests/SystemTests/CustomerAPI",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "AppStoreSimKit", "AsyncHTTPClient", "Crypto",
            "Entitlements", "JWSVerification", "Logging", "NIOCore", "NIOHTTP1", "NotificationPipeline",
            "PipelineRecords", "PostgresNIO", "Prometheus", "RdKafka", "ServiceLifecycle", "ServiceRuntime", "Storage",
            "SystemTestSupport", "TestSupport",
        ]),
    Module(
        name: "SystemEndToEndTests", kind: .tests, path: "Tests/SystemTests/EndToEnd",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AppStoreSigning", "AppStoreSimKit", "AsyncHTTPClient", "Entitlements",
            "Logging", "NIOCore", "NIOHTTP1", "NotificationPipeline", "PipelineRecords", "PostgresNIO", "RdKafka",
            "Storage", "SystemTestSupport", "TestSupport",
        ]),
    Module(
        name: "SystemOperationsTests", kind: .tests, path: "Tests/SystemTests/Operations", imports: ["TestSupport"]),
    Module(
        name: "SystemRecoveryTests", kind: .tests, path: "Tests/SystemTests/Recovery",
        imports: [
            "AppStoreModels", "AppStoreSimKit", "Entitlements", "JWSVerification", "Logging", "NotificationPipeline",
            "PipelineRecords", "PostgresNIO", "RdKafka", "ServiceRuntime", "Storage", "SystemTestSupport",
            "TestSupport",
        ]),
    Module(
        name: "SystemRefundResolverTests", kind: .tests, path: "Tests/SystemTests/RefundResolver",
        imports: [
            "AppStoreAPI", "AppStoreModels", "AppStoreSimKit", "Entitlements", "Logging", "NotificationPipeline",
            "PipelineRecords", "RdKafka", "RefundResolver", "ServiceRuntime", "SystemTestSupport", "TestSupport",
        ]),
    Module(
        name: "CustomerAPITests", kind: .tests, path: "Tests/CustomerAPITests",
        imports: [
            "AppStoreAPI", "AppStoreModels", "Crypto", "CustomerAPI", "Entitlements", "Hummingbird",
            "HummingbirdTesting", "JWSVerification", "Logging",
            "NotificationPipeline",
            "PipelineRecords", "Prometheus", "ServiceRuntime", "Storage", "TestSupport",
        ]),
    Module(
        name: "RetentionMessagingTests", kind: .tests, path: "Tests/RetentionMessagingTests",
        imports: ["AppStoreModels", "Crypto", "RetentionMessaging", "ServiceRuntime", "Storage"]),
    Module(
        name: "IAPCtlTests", kind: .tests, path: "Tests/IAPCtlTests",
        imports: ["AppStoreAPI", "IAPCtl", "NotificationPipeline", "PipelineRecords", "Storage", "TestSupport"]),
]

// MARK: - The package, from the table

/// A module's dependencies: the table's modules by name, other packages' modules as products.
@MainActor func dependencies(_ module: Module) -> [Target.Dependency] {
    module.imports.map { name in
        if let source = external[name] { return .product(name: source.product, package: source.package) }
        return .target(name: name)
    }
}

/// The SwiftPM target of a row.
@MainActor func target(_ module: Module) -> Target {
    switch module.kind {
    case .library, .testSupport:
        let settings = if case .testSupport = module.kind { testSettings } else { strictSettings }
        let exclude = module.name == "Entitlements" ? ["Schemas"] : []
        return .target(
            name: module.name, dependencies: dependencies(module), path: module.path, exclude: exclude,
            swiftSettings: settings)
    case .executable:
        let settings = module.imports.contains("TestSupport") ? testSettings : strictSettings
        return .executableTarget(
            name: module.name, dependencies: dependencies(module), path: module.path, resources: module.resources,
            swiftSettings: settings)
    case .tests:
        return .testTarget(
            name: module.name, dependencies: dependencies(module), path: module.path, swiftSettings: testSettings)
    case .system:
        return .systemLibrary(
            name: module.name, path: module.path, pkgConfig: "rdkafka", providers: [.apt(["librdkafka-dev"])])
    }
}

/// The products: every executable by its command name, and the libraries published to other packages.
@MainActor func products(_ modules: [Module]) -> [Product] {
    modules.compactMap { module in
        switch module.kind {
        case .executable(let name): .executable(name: name, targets: [module.name])
        case .library(product: true): .library(name: module.name, targets: [module.name])
        default: nil
        }
    }
}

let package = Package(
    name: "appstore-notifications",
    platforms: [.macOS(.v15)],
    products: products(modules),
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-service-context.git", from: "1.5.1"),
        // OTLP over HTTP only (JSON or protobuf): the gRPC exporter's packages are not built.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
    ],
    targets: modules.map(target)
)
