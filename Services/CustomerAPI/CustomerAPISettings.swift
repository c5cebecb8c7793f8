import AppStoreModels
import Entitlements
import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Storage
import Webhooks

/// Everything customer-api reads from its environment (see docs/configuration.md).
struct CustomerAPISettings: Sendable {
    var http = HTTPSettings(port: 8085)
    var database: DatabaseSettings
    /// How often the keys held in memory are read again (a new, revoked or expired key takes effect within it).
    var keyRefresh: Duration = .seconds(2)
    /// The most requests one API key may have in flight (default a quarter of `HTTP_MAX_CONCURRENT_REQUESTS`).
    var keyConcurrency: Int?
    /// What the POST of purchases needs; nil: the POST answers 503 `not-configured`.
    var purchases: PurchaseSettings?
    /// The key offers are signed with; nil: the offer route answers 503 `not-configured`.
    var offers: OfferSigningSettings?
    /// The environment a look-up without `environment` reads: Production when `APPSTORE_ENVIRONMENTS` (default
    /// Production and Sandbox) has it, else every environment (`all`).
    var defaultLookupEnvironment: String? = "Production"
    /// The products and offers the offer route may sign (`APPSTORE_OFFER_CATALOG_FILE`, required with the key).
    var offerCatalog = OfferCatalog()
    /// Where registered webhook URLs may point (`WEBHOOK_ALLOW_PRIVATE_ADDRESSES`: http and private addresses too,
    /// for local runs and tests; the dispatcher reads the same setting).
    var webhookAddresses = EndpointAddressPolicy()
    /// The topics' names (`TOPIC_*`): the event feed serves the events of the three `entitlements.*` topics.
    var topics = PipelineTopics()
    /// The listener of the support routes (`/v1/admin/…`) and the console (`CUSTOMER_API_ADMIN_PORT`), which no
    /// public Service exposes; nil: they share the public port (local runs only; the manifests set it).
    var adminPort: Int?

    /// What taking purchases from apps needs: the apps and roots JWS are verified against, the broker the
    /// records go to, the App Store Server API for ids and receipts (optional), and the policies.
    struct PurchaseSettings: Sendable {
        var accepted: AcceptedApps
        /// Signs the purchase, consumption-facts and resync records it writes to the verified topic.
        var signing: RecordSigner
        var trust = TrustSettings()
        var kafka: KafkaClientSettings
        var topics = PipelineTopics()
        /// nil: transaction ids and receipts answer 503 `not-configured` (a JWS still works).
        var api: AppStoreAPISettings?
        /// A purchase already bound to another app user: move it (`transfer`) or answer 409 (`refuse`).
        var onConflict: AppPurchaseRecord.ConflictPolicy = .refuse
        /// How long a POST waits for the entitlement-updater to commit before answering 202.
        var applyWait: Duration = .seconds(5)
        /// The largest request body taken (a StoreKit 1 receipt of a long-time subscriber can be ~100 KB).
        var maximumBodyBytes = 512 * 1024
    }

    init(database: DatabaseSettings, purchases: PurchaseSettings? = nil) {
        self.database = database
        self.purchases = purchases
    }

    /// Reads `DATABASE_URL`, the shared HTTP settings, `CUSTOMER_API_ADMIN_PORT`, `CUSTOMER_API_KEY_REFRESH_MS`,
    /// `CUSTOMER_API_KEY_CONCURRENCY`; with `APPSTORE_APPS`
    /// set, the purchase settings: `KAFKA_BROKERS`, `RECORD_SIGNING_KEYS`, the trust and API settings, `CUSTOMER_TRANSFER_POLICY`,
    /// `CUSTOMER_API_APPLY_WAIT_MS` and `CUSTOMER_API_MAX_BODY_BYTES`; the offer key (`APPSTORE_OFFER_KEY_*`).
    init(_ settings: EnvironmentSettings) throws {
        self.database = try DatabaseSettings(environment: settings.values)
        self.http = try HTTPSettings(settings, defaultPort: 8085)
        self.keyRefresh = try settings.milliseconds("CUSTOMER_API_KEY_REFRESH_MS", default: self.keyRefresh)
        guard self.keyRefresh >= .milliseconds(100), self.keyRefresh <= .seconds(60) else {
            throw SettingsError("CUSTOMER_API_KEY_REFRESH_MS must be 100 to 60000")
        }
        for removed in ["CUSTOMER_API_KEY_CACHE_MS", "CUSTOMER_API_KEY_LOOKUPS_PER_SECOND"]
        where settings.values[removed] != nil {
            throw SettingsError(
                "\(removed) is gone: keys are held in memory and read again every CUSTOMER_API_KEY_REFRESH_MS; "
                    + "remove it (docs/configuration.md)")
        }
        if let text = settings.values["CUSTOMER_API_ADMIN_PORT"], !text.isEmpty {
            guard let port = Int(text), (1...65_535).contains(port), port != self.http.port,
                port != self.http.operationsPort
            else {
                throw SettingsError(
                    "CUSTOMER_API_ADMIN_PORT must be a port from 1 to 65535 other than HTTP_PORT and OPERATIONS_PORT, "
                        + "not \(text)")
            }
            self.adminPort = port
        }
        if let share = settings.values["CUSTOMER_API_KEY_CONCURRENCY"], !share.isEmpty {
            guard let value = Int(share), value >= 1 else {
                throw SettingsError("CUSTOMER_API_KEY_CONCURRENCY must be at least 1, not \(share)")
            }
            self.keyConcurrency = value
        }
        self.offerCatalog = try Self.offerCatalog(settings)
        self.topics = PipelineTopics(settings)
        self.webhookAddresses = EndpointAddressPolicy(
            allowsPrivate: try settings.bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default: false))
        let environments = try ConfiguredApps.environments(
            settings.list("APPSTORE_ENVIRONMENTS", default: ["Production", "Sandbox"]))
        self.defaultLookupEnvironment = environments.contains(.production) ? "Production" : nil
        guard !settings.string("APPSTORE_APPS", default: "").isEmpty else {
            self.offers = try OfferSigningSettings(settings, apiKey: nil)
            try self.requireCatalog()
            return
        }
        let accepted = try AcceptedApps(settings)
        var purchases = PurchaseSettings(
            accepted: accepted, signing: try RecordSigner(.customerAPI, settings),
            kafka: try KafkaClientSettings(settings, clientID: "customer-api"))
        purchases.trust = try TrustSettings(settings)
        purchases.topics = PipelineTopics(settings)
        if !settings.string("APPSTORE_API_KEY_FILE", default: "").isEmpty {
            purchases.api = try AppStoreAPISettings(settings, accepted: accepted)
        }
        let policy = settings.string("CUSTOMER_TRANSFER_POLICY", default: "refuse")
        guard let onConflict = AppPurchaseRecord.ConflictPolicy(rawValue: policy) else {
            throw SettingsError("CUSTOMER_TRANSFER_POLICY must be transfer or refuse, not \(policy)")
        }
        purchases.onConflict = onConflict
        purchases.applyWait = try settings.milliseconds("CUSTOMER_API_APPLY_WAIT_MS", default: purchases.applyWait)
        purchases.maximumBodyBytes = max(
            1024, try settings.int("CUSTOMER_API_MAX_BODY_BYTES", default: purchases.maximumBodyBytes))
        self.purchases = purchases
        self.offers = try OfferSigningSettings(settings, apiKey: purchases.api?.credentials)
        try self.requireCatalog()
    }

    /// The catalog `APPSTORE_OFFER_CATALOG_FILE` names (empty when unset); a file that cannot be read or used stops the
    /// service.
    static func offerCatalog(_ settings: EnvironmentSettings) throws -> OfferCatalog {
        let path = settings.string("APPSTORE_OFFER_CATALOG_FILE", default: "")
        guard !path.isEmpty else { return OfferCatalog() }
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw SettingsError("APPSTORE_OFFER_CATALOG_FILE: cannot read \(path)")
        }
        do {
            return try OfferCatalog(json: Array(bytes))
        } catch {
            throw SettingsError("APPSTORE_OFFER_CATALOG_FILE: \(path): \(error)")
        }
    }

    /// An offer key without a catalog would sign offers StoreKit never lists: refused at start.
    private func requireCatalog() throws {
        if self.offers != nil && self.offerCatalog.isEmpty {
            throw SettingsError(
                "APPSTORE_OFFER_KEY_FILE needs APPSTORE_OFFER_CATALOG_FILE: the subscription groups, products and "
                    + "promotional offer identifiers offers may be signed for (docs/offers.md)")
        }
    }
}
