import AppStoreModels
import AppStoreSigning
import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOHTTP1
import ServiceLifecycle
import UnixSignals

/// `appstore-sim`: a stand-in for the App Store for local runs, tests and load (the executable runs this command).
public struct AppStoreSimCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "appstore-sim",
        abstract: "A stand-in for the App Store: signed notifications, the App Store Server API, expected state.",
        subcommands: [Initialize.self, Run.self, Expected.self])

    public init() {}

    /// Parses the process's arguments and runs the subcommand they name, exiting as the command line expects.
    public static func runFromCommandLine() async {
        await Self.main()
    }
}

/// The file the sim's In-App Purchase key is stored in (PKCS#8 PEM, like App Store Connect's `.p8`).
let apiKeyFileName = "api-key.p8"
/// The file of the In-App Purchase key the team signs offers with (a second key, as docs/offers.md advises).
let offerKeyFileName = "offer-key.p8"
/// The offer key's identifier in the sim's App Store Connect.
let offerKeyID = "SIMOFFER01"

/// `appstore-sim init --dir DIR`: creates the sim's PKI and API key, and prints the pipeline settings that trust them.
struct Initialize: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create the sim's PKI and API key in a directory.")
    @Option(help: "Directory for root.der, the keys and api-key.p8.") var dir: String
    @Option(help: "The OCSP responder the certificates name (the sim serves one at /sim/ocsp), as Apple's do.")
    var ocspUrl: String?
    @Option(help: "The bundle identifier the offer catalog (offer-catalog.json) is written for.")
    var bundleId = "com.example.subscriptions"

    func run() throws {
        let directory = URL(fileURLWithPath: self.dir)
        var options = TestPKI.Options()
        options.ocspURL = self.ocspUrl
        _ = try TestPKI.loadOrCreate(in: directory, options: options)
        let keyFile = directory.appendingPathComponent(apiKeyFileName)
        let offerKeyFile = directory.appendingPathComponent(offerKeyFileName)
        for file in [keyFile, offerKeyFile] where !FileManager.default.fileExists(atPath: file.path) {
            try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: file)
        }
        print("APPSTORE_ROOT_CERTIFICATES=\(directory.appendingPathComponent("root.der").path)")
        print("APPSTORE_API_KEY_FILE=\(keyFile.path)")
        let catalogFile = directory.appendingPathComponent(SimOfferCatalog.fileName)
        try Data(SimOfferCatalog.json(bundleId: self.bundleId).utf8).write(to: catalogFile)
        print("APPSTORE_OFFER_KEY_FILE=\(offerKeyFile.path)")
        print("APPSTORE_OFFER_KEY_ID=\(offerKeyID)")
        print("APPSTORE_OFFER_CATALOG_FILE=\(catalogFile.path)")
    }
}

/// The scenario options `run` and `expected` share.
struct ScenarioOptions: ParsableArguments {
    @Option(help: "Customers in the scenario.") var customers = 200
    @Option(help: "Random seed (a seed reproduces the scenario and the expected state).") var seed: UInt64 = 1
    @Option(help: "Bundle identifier.") var bundleId = "com.example.subscriptions"
    @Option(help: "App Store app identifier.") var appAppleId: Int64 = 1_234_567_890
    @Option(
        help:
            "Environments, comma-separated: Production, Sandbox or both (Sandbox then gets a quarter as many customers, some sharing their appAccountToken with Production)."
    )
    var environments = "Production,Sandbox"
    @Flag(
        help:
            "Send subscription REFUNDs without data.status (Apple always carries it; without it every refund of a subscription is the resolver's to settle)."
    )
    var refundsWithoutStatus = false

    /// The environments named, in order.
    func parsedEnvironments() throws -> [AppStoreModels.Environment] {
        let parsed = try self.environments.split(separator: ",").map { name -> AppStoreModels.Environment in
            let name = name.trimmingCharacters(in: .whitespaces)
            guard let environment = AppStoreModels.Environment(rawValue: name), environment.isAppStoreServer else {
                throw ValidationError("unknown environment \(name) (Production, Sandbox)")
            }
            return environment
        }
        guard !parsed.isEmpty else { throw ValidationError("--environments names none") }
        return parsed
    }
}

/// `appstore-sim expected`: prints the final state every customer must have after a scenario.
struct Expected: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the expected entitlements of a scenario as JSON.")
    @OptionGroup var scenario: ScenarioOptions

    func run() throws {
        var configuration = SimConfiguration(apiPublicKey: P256.Signing.PrivateKey().publicKey)
        configuration.bundleId = self.scenario.bundleId
        configuration.appAppleId = self.scenario.appAppleId
        configuration.environments = try self.scenario.parsedEnvironments()
        configuration.customers = self.scenario.customers
        configuration.seed = self.scenario.seed
        configuration.refundCarriesStatus = !self.scenario.refundsWithoutStatus
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let scenario = Simulator.scenario(configuration, epoch: Int64(Date().timeIntervalSince1970 * 1000))
        print(String(decoding: try encoder.encode(scenario.expected), as: UTF8.self))
    }
}

/// `appstore-sim run`: serves the API, delivers a scenario to ingest, prints a summary, and keeps serving if asked.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the App Store Server API and deliver a scenario to ingest.")
    @OptionGroup var scenario: ScenarioOptions
    @Option(help: "Directory made by `init` (PKI and api-key.p8).") var dir: String
    @Option(help: "API key id the pipeline uses.") var keyId = "SIMKEY0001"
    @Option(help: "Issuer id the pipeline uses.") var issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    @Option(help: "Address to serve the API on.") var host = "127.0.0.1"
    @Option(help: "Port to serve the API on.") var port = 8090
    @Option(help: "Ingest's notification URL (nothing is delivered without it).") var ingestURL: String?
    @Option(help: "Posts per second offered (default: as fast as the concurrency allows).") var rate: Double?
    @Option(help: "Posts in flight at once.") var concurrency = 16
    @Flag(
        help:
            "Post notifications to plain http:// URLs with a minimal HTTP/1.1 client on one event loop instead of AsyncHTTPClient: the same requests for less CPU (the benchmarks, where the sim shares the cores it measures)."
    )
    var plainHttpClient = false
    @Option(help: "Share of notifications delivered twice.") var duplicates = 0.1
    @Flag(help: "Deliver in signing order instead of shuffled.") var inOrder = false
    @Option(help: "Compressed Apple retry delays in ms between re-send passes, comma-separated (e.g. 1000,2000).")
    var retryDelaysMs = ""
    @Option(help: "Write the expected entitlements (JSON) here.") var expectedOut: String?
    @Option(
        help: "Write the completeness facts (JSON: every carried transaction, every refund-like notification) here.")
    var factsOut: String?
    @Flag(help: "Keep serving the API after delivering (until SIGINT/SIGTERM).") var keepServing = false
    @Option(
        help:
            "Write one line per auto-renewable subscription here (a transaction id of it), the entries of `iapctl resync --file`."
    )
    var subscriptionsOut: String?
    @Option(
        help:
            "Share of customers without an appAccountToken whose app posts the purchase to customer-api first (half of them instead of the notification)."
    )
    var appPostShare = 0.0
    @Option(
        help: "Share of DID_RENEW and EXPIRED notifications lost for good (never sent, not in notification history).")
    var lostShare = 0.0
    @Option(
        help:
            "Share of purchases with a refund request open now: a CONSUMPTION_REQUEST signed minutes ago, its 12-hour window open."
    )
    var openRefundRequests = 0.0
    @Option(
        help:
            "Share of those customers whose app records consent for consumption answers through customer-api before delivery."
    )
    var consentShare = 0.0
    @Option(
        help:
            "Share of the app's lapsed subscribers who come back with a promotional offer customer-api signs (needs offer-key.p8 from `init`)."
    )
    var offerPurchaseShare = 0.0
    @Option(help: "customer-api's base URL, where the app posts its purchases.") var customerApiUrl: String?
    @Option(help: "The app's customer-api key (default: CUSTOMER_API_KEY).") var customerApiKey: String?

    func run() async throws {
        var logger = Logger(label: "appstore-sim")
        logger.logLevel = .warning
        let directory = URL(fileURLWithPath: self.dir)
        let pki = try TestPKI.loadOrCreate(in: directory)
        let pem = try String(contentsOf: directory.appendingPathComponent(apiKeyFileName), encoding: .utf8)
        var configuration = SimConfiguration(
            apiPublicKey: try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey)
        configuration.customers = self.scenario.customers
        configuration.seed = self.scenario.seed
        configuration.bundleId = self.scenario.bundleId
        configuration.appAppleId = self.scenario.appAppleId
        configuration.environments = try self.scenario.parsedEnvironments()
        configuration.refundCarriesStatus = !self.scenario.refundsWithoutStatus
        configuration.apiKeyID = self.keyId
        configuration.issuerID = self.issuerId
        configuration.host = self.host
        configuration.port = self.port
        configuration.ingestURL = self.ingestURL
        // Without an ingest URL nothing is delivered, so nothing is signed up front (a large onboarding scenario).
        configuration.signsNotifications = self.ingestURL != nil
        configuration.rate = self.rate
        configuration.concurrency = self.concurrency
        configuration.plainHTTPClient = self.plainHttpClient
        configuration.duplicates = self.duplicates
        configuration.shuffled = !self.inOrder
        configuration.retryDelays = self.retryDelaysMs.split(separator: ",").compactMap { Int64($0) }.map {
            Duration.milliseconds($0)
        }
        configuration.appPostShare = self.appPostShare
        configuration.lostShare = self.lostShare
        configuration.openRefundRequestShare = self.openRefundRequests
        configuration.consentShare = self.consentShare
        configuration.offerPurchaseShare = self.offerPurchaseShare
        let offerKeyFile = directory.appendingPathComponent(offerKeyFileName)
        if let offerPEM = try? String(contentsOf: offerKeyFile, encoding: .utf8) {
            configuration.offerPublicKeys = [
                offerKeyID: try P256.Signing.PrivateKey(pemRepresentation: offerPEM).publicKey
            ]
        } else if self.offerPurchaseShare > 0 {
            throw ValidationError("--offer-purchase-share needs \(offerKeyFile.path) (run `appstore-sim init`)")
        }
        configuration.customerAPIURL = self.customerApiUrl
        configuration.customerAPIKey = self.customerApiKey ?? ProcessInfo.processInfo.environment["CUSTOMER_API_KEY"]
        guard
            (self.appPostShare == 0 && self.offerPurchaseShare == 0)
                || (configuration.customerAPIURL != nil && configuration.customerAPIKey != nil)
        else {
            throw ValidationError(
                "--app-post-share and --offer-purchase-share need --customer-api-url and --customer-api-key (or CUSTOMER_API_KEY)"
            )
        }
        let simulator = try Simulator(configuration: configuration, pki: pki)
        if let path = self.expectedOut {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(simulator.scenario.expected).write(to: URL(fileURLWithPath: path))
        }
        if let path = self.factsOut {
            try JSONEncoder().encode(simulator.scenario.facts).write(to: URL(fileURLWithPath: path))
        }
        if let path = self.subscriptionsOut {
            let lines = simulator.scenario.purchases.values
                .filter { $0.productType == .autoRenewableSubscription && $0.environment == .production }
                .sorted { $0.originalTransactionId < $1.originalTransactionId }
                .compactMap { $0.transactions.last?.transactionId }
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
            SimOutput.line("appstore-sim: \(lines.count) subscriptions written to \(path)")
        }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let host = self.host
        let app = simulator.application(http: http, logger: logger) { port in
            SimOutput.line("appstore-sim: App Store Server API on http://\(host):\(port)")
        }
        let runner = ScenarioRunner(simulator: simulator, http: http, keepServing: self.keepServing)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: app),
                    .init(service: runner, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do { try await group.run() } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }
}

/// Delivers the scenario once the server is up, prints the summary, then ends the run (or waits for a signal).
/// Its description is its name: the service group describes its services, and the mirror of a whole scenario
/// (130,000 customers' purchases) took minutes to print.
struct ScenarioRunner: Service, CustomStringConvertible {
    var description: String { "ScenarioRunner" }

    let simulator: Simulator
    let http: HTTPClient
    let keepServing: Bool

    func run() async throws {
        try await self.waitForOwnServer()
        let scenario = self.simulator.scenario
        SimOutput.line(
            "appstore-sim: \(self.simulator.configuration.customers) customers, \(scenario.notifications.count) notifications, "
                + "\(scenario.expected.count) expected entitlements (\(scenario.expected.filter(\.active).count) active)"
        )
        for (name, count) in scenario.lifeCycles.sorted(by: { $0.key < $1.key }) {
            SimOutput.line("  \(count)\t\(name)")
        }
        if !scenario.lost.isEmpty {
            SimOutput.line(
                "appstore-sim: \(scenario.lost.count) notifications lost for good (\(scenario.lost.filter { Scenario.losableTypes.contains($0.type) }.count) "
                    + "DID_RENEW/EXPIRED, the others purchases the app posted instead)")
        }
        if let url = self.simulator.configuration.customerAPIURL, let key = self.simulator.configuration.customerAPIKey,
            !scenario.appPosts.isEmpty
        {
            SimOutput.line(
                "appstore-sim: the app posts \(scenario.appPosts.count) purchases to \(url) (app user ids, no appAccountToken)"
            )
            let statuses = await self.simulator.postAppPurchases(http: self.http, to: url, key: key)
            SimOutput.line(
                "appstore-sim: app posts answered "
                    + statuses.sorted { $0.key < $1.key }.map { "HTTP \($0.key): \($0.value)" }.joined(separator: ", "))
        }
        if let url = self.simulator.configuration.customerAPIURL, let key = self.simulator.configuration.customerAPIKey,
            !scenario.offerPurchases.isEmpty
        {
            let host = self.simulator.configuration.host == "0.0.0.0" ? "127.0.0.1" : self.simulator.configuration.host
            let report = await self.simulator.buyWithOffers(
                http: self.http, customerAPI: url, key: key,
                storeURL: "http://\(host):\(self.simulator.configuration.port)/sim/storekit/purchases")
            SimOutput.line(
                "appstore-sim: \(scenario.offerPurchases.count) lapsed subscribers come back with a promotional offer: "
                    + "customer-api signed \(report.signed.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")), "
                    + "StoreKit bought \(report.bought), refused \(report.forgedRefused) altered signature"
                    + (report.failures.isEmpty ? "" : "; failures: \(report.failures.prefix(3))"))
        }
        if let url = self.simulator.configuration.customerAPIURL, let key = self.simulator.configuration.customerAPIKey,
            !self.simulator.consentingRefundRequests.isEmpty
        {
            SimOutput.line(
                "appstore-sim: \(scenario.openRefundRequests.count) refund requests open now; the app records consent for "
                    + "\(self.simulator.consentingRefundRequests.count) of their customers")
            let statuses = await self.simulator.postConsents(http: self.http, to: url, key: key)
            SimOutput.line(
                "appstore-sim: consent posts answered "
                    + statuses.sorted { $0.key < $1.key }.map { "HTTP \($0.key): \($0.value)" }.joined(separator: ", "))
        }
        if let url = self.simulator.configuration.ingestURL {
            let plan = self.simulator.deliveryPlan()
            SimOutput.line("appstore-sim: delivering \(plan.count) posts (duplicates included) to \(url)")
            _ = await self.simulator.deliver(plan, http: self.http, to: url, progress: SimOutput.line)
            await self.simulator.retryUndelivered(http: self.http, to: url, progress: SimOutput.line)
            let undelivered = await self.simulator.store.undeliveredCount()
            SimOutput.line(
                "appstore-sim: \(undelivered) notifications undelivered (they stay in notification history with onlyFailures)"
            )
        }
        if self.keepServing { try? await gracefulShutdown() }
    }

    /// Waits until the API answers, so the pipeline can call it as soon as the first notification arrives.
    private func waitForOwnServer() async throws {
        let host = self.simulator.configuration.host == "0.0.0.0" ? "127.0.0.1" : self.simulator.configuration.host
        let url = "http://\(host):\(self.simulator.configuration.port)/sim/stats"
        for _ in 0..<200 {
            if (try? await self.http.execute(HTTPClientRequest(url: url), timeout: .seconds(1)))?.status == .ok {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ValidationError("the API did not start on \(url)")
    }
}

/// Lines for the operator, on standard error so standard output stays machine-readable.
enum SimOutput {
    static func line(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
