import AppStoreAPI
import AppStoreModels
import AppStoreSigning
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Crypto
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import ServiceLifecycle
import TestSupport

/// An `appstore-sim` running in-process on a free loopback port, with the API key and trust the pipeline
/// needs to talk to it.
public struct SimHarness: Sendable {
    @_spi(Testing) public let simulator: Simulator
    public let pki: TestPKI
    public let apiKey: P256.Signing.PrivateKey
    /// The In-App Purchase key the team signs offers with (the sim knows its public key, as App Store Connect does).
    public let offerKey: P256.Signing.PrivateKey
    public let baseURL: URL
    public let http: HTTPClient
    public static let keyID = "SIMKEY0001"
    public static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    public static let offerKeyID = "SIMOFFER01"

    /// Warnings are the sim's own reports of what went wrong on the wire (a performance-test request without an
    /// answer, with the client's error); it logs nothing else at that level.
    public static var logger: Logger {
        var logger = Logger(label: "sim-test")
        logger.logLevel = .warning
        return logger
    }

    /// Runs `body` with a sim serving `customers` customers from `seed`.
    @_spi(Testing) public static func with<T: Sendable>(
        customers: Int, seed: UInt64, environment: AppStoreModels.Environment = .production,
        apiKey: P256.Signing.PrivateKey = P256.Signing.PrivateKey(),
        configure: (inout SimConfiguration) -> Void = { _ in }, _ body: (SimHarness) async throws -> T
    ) async throws -> T {
        let port = try LocalComponents.freePortBelowEphemeralRange()
        // As Apple's, the sim's certificates name their OCSP responder: the sim itself.
        var options = TestPKI.Options()
        options.ocspURL = "http://127.0.0.1:\(port)/sim/ocsp"
        let pki = try TestPKI(options)
        let offerKey = P256.Signing.PrivateKey()
        var configuration = SimConfiguration(apiPublicKey: apiKey.publicKey)
        configuration.offerPublicKeys = [Self.offerKeyID: offerKey.publicKey]
        configuration.customers = customers
        configuration.seed = seed
        configuration.environments = [environment]
        configuration.port = port
        configure(&configuration)
        let simulator = try Simulator(configuration: configuration, pki: pki)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let harness = SimHarness(
            simulator: simulator, pki: pki, apiKey: apiKey, offerKey: offerKey,
            baseURL: URL(string: "http://127.0.0.1:\(port)")!,
            http: http)
        let group = ServiceGroup(
            configuration: .init(
                services: [simulator.application(http: http, logger: Self.logger)], logger: Self.logger))
        let running = Task { try await group.run() }
        do {
            try await harness.waitUntilServing()
            let result = try await body(harness)
            await group.triggerGracefulShutdown()
            try await running.value
            try await http.shutdown()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            try? await http.shutdown()
            throw error
        }
    }

    /// Polls `/sim/stats` until the server answers.
    public func waitUntilServing() async throws {
        try await self.waitForOK(self.baseURL.absoluteString + "/sim/stats", what: "appstore-sim")
    }

    /// Polls a URL until it answers 200 (10 s at most).
    public func waitForOK(_ url: String, what: String) async throws {
        for _ in 0..<100 {
            if (try? await self.http.execute(HTTPClientRequest(url: url), timeout: .seconds(1)))?.status == .ok {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("\(what) did not start")
    }

    // MARK: The pipeline's side

    public var app: AppIdentity {
        AppIdentity(
            bundleId: self.simulator.configuration.bundleId, appAppleId: self.simulator.configuration.appAppleId)
    }
    public var accepted: AcceptedApps { AcceptedApps(apps: [self.app], environments: [.production, .sandbox]) }

    /// Trust in this sim's root.
    public var trust: TrustSettings {
        var trust = TrustSettings()
        trust.trustedRoots = [self.pki.root]
        return trust
    }

    /// The sim's Sandbox API (it serves Production at its root).
    public var sandboxURL: URL { self.baseURL.appendingPathComponent("sandbox") }

    /// API settings pointing at this sim (production at its root, sandbox under `/sandbox`, unless given).
    public func apiSettings(sandboxURL: URL? = nil, fallback: Bool = false) throws -> AppStoreAPISettings {
        AppStoreAPISettings(
            credentials: APICredentials(
                keyID: Self.keyID, issuerID: Self.issuerID, bundleID: self.app.bundleId, privateKey: self.apiKey),
            configuration: AppStoreAPIConfiguration(
                environment: .production, productionURL: self.baseURL, sandboxURL: sandboxURL ?? self.sandboxURL,
                sandboxFallback: fallback,
                requestTimeout: .seconds(10)))
    }

    /// A client for this sim.
    public func client(
        retry: RetryPolicy = RetryPolicy(), trust: TrustSettings? = nil, sandboxURL: URL? = nil, fallback: Bool = false
    ) throws
        -> AppStoreServerAPIClient
    {
        try self.apiSettings(sandboxURL: sandboxURL, fallback: fallback)
            .makeClient(
                http: self.http, verifiers: try (trust ?? self.trust).makeVerifiers(for: self.accepted), retry: retry,
                logger: Self.logger)
    }

    /// Environment variables for `iapctl` talking to this sim.
    public func environment(directory: URL, bootstrap: String) throws -> [String: String] {
        let keyFile = directory.appendingPathComponent("api-key.p8")
        try Data(self.apiKey.pemRepresentation.utf8).write(to: keyFile)
        let offerKeyFile = directory.appendingPathComponent("offer-key.p8")
        try Data(self.offerKey.pemRepresentation.utf8).write(to: offerKeyFile)
        let root = directory.appendingPathComponent("root.der")
        try Data(self.pki.rootDER).write(to: root)
        let catalog = directory.appendingPathComponent("offer-catalog.json")
        try Data(SimOfferCatalog.json(bundleId: self.app.bundleId).utf8).write(to: catalog)
        let intermediate = directory.appendingPathComponent("intermediate.der")
        try Data(TestPKI.der(self.pki.intermediate)).write(to: intermediate)
        return [
            "APPSTORE_APPS": "\(self.app.bundleId):\(self.app.appAppleId!)", "APPSTORE_ROOT_CERTIFICATES": root.path,
            "APPSTORE_INTERMEDIATE_CERTIFICATES": intermediate.path,
            "APPSTORE_API_KEY_FILE": keyFile.path, "APPSTORE_API_KEY_ID": Self.keyID,
            "APPSTORE_API_ISSUER_ID": Self.issuerID,
            "APPSTORE_OFFER_KEY_FILE": offerKeyFile.path, "APPSTORE_OFFER_KEY_ID": Self.offerKeyID,
            "APPSTORE_OFFER_CATALOG_FILE": catalog.path,
            "APPSTORE_API_URL_PRODUCTION": self.baseURL.absoluteString,
            "APPSTORE_API_URL_SANDBOX": self.sandboxURL.absoluteString,
            "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "RECORD_SIGNING_KEYS": TestRecordSigning.variable(.iapctl),
        ]
    }

    /// What every service of an end-to-end run gets: the sim's apps, keys and trust, the broker, the database,
    /// both environments, and short retry waits.
    public func pipelineEnvironment(directory: URL, bootstrap: String, databaseURL: String) throws -> [String: String] {
        try self.environment(directory: directory, bootstrap: bootstrap).merging([
            "DATABASE_URL": databaseURL, "APPSTORE_ENVIRONMENTS": "Production,Sandbox",
            "LOG_LEVEL": "warning",
            "KAFKA_SESSION_TIMEOUT_MS": "6000", "RESOLVER_RATE_PER_SECOND": "50",
            "RESOLVER_RETRY_BASE_MS": "200",
            "RESOLVER_RETRY_MAX_MS": "2000",
        ]) { _, new in new }
    }

    /// A legacy (StoreKit 1) transaction receipt naming `transactionId`.
    public static func legacyReceipt(_ transactionId: String) -> String {
        let inner = Data("{\n\t\"transaction-id\" = \"\(transactionId)\";\n}".utf8).base64EncodedString()
        return Data("{\n\t\"purchase-info\" = \"\(inner)\";\n}".utf8).base64EncodedString()
    }

    /// Sets the sim's faults.
    @_spi(Testing) public func setFaults(_ faults: SimStore.Faults) async {
        await self.simulator.store.setFaults(faults)
    }
    @_spi(Testing) public var stats: SimStore.Stats { get async { await self.simulator.store.stats } }
    public var sinkURL: String { self.baseURL.absoluteString + "/sim/sink" }
}

/// A harness part that did not come up.
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
