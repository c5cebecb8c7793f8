import AppStoreAPI
import AppStoreModels
import AppStoreSigning
import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging

/// Everything a sim run is configured with.
@_spi(Testing) public struct SimConfiguration: Sendable {
    @_spi(Testing) public var bundleId = "com.example.subscriptions"
    @_spi(Testing) public var appAppleId: Int64 = 1_234_567_890
    /// The environments the run sends from: Production gets `customers` customers, Sandbox (beside it) a
    /// quarter as many, whose appAccountTokens are drawn like Production's, so some customers have both.
    @_spi(Testing) public var environments: [AppStoreModels.Environment] = [.production]
    @_spi(Testing) public var customers = 200
    @_spi(Testing) public var seed: UInt64 = 1
    /// The share of notifications delivered twice (Apple retries carry the same notificationUUID).
    @_spi(Testing) public var duplicates = 0.1
    /// Delivery in random order (Apple promises no order) rather than signing order.
    @_spi(Testing) public var shuffled = true
    /// Whether subscription REFUNDs carry `data.status`, as Apple's do (off: every refund of a subscription is
    /// refund-resolver's to settle, a less faithful mode for the tests of that path).
    @_spi(Testing) public var refundCarriesStatus = true
    /// The In-App Purchase key the pipeline signs API tokens with: its id, issuer and public key.
    @_spi(Testing) public var apiKeyID = "SIMKEY0001"
    @_spi(Testing) public var issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    @_spi(Testing) public var apiPublicKey: P256.Signing.PublicKey
    @_spi(Testing) public var host = "127.0.0.1"
    @_spi(Testing) public var port = 8090
    /// Where notifications go.
    @_spi(Testing) public var ingestURL: String?
    /// Whether every notification is signed up front (off for a sim that only serves the API, such as an
    /// onboarding of existing subscribers: a million signatures it would never send).
    @_spi(Testing) public var signsNotifications = true
    @_spi(Testing) public var rate: Double?
    @_spi(Testing) public var concurrency = 16
    /// Whether notifications to plain `http://` URLs are posted by ``PlainHTTPPoster`` rather than AsyncHTTPClient
    /// (the same requests from a lighter client: the benchmarks', where the sim shares the cores it measures).
    @_spi(Testing) public var plainHTTPClient = false
    /// Apple's retry schedule, compressed: delays between the passes that re-send undelivered notifications.
    @_spi(Testing) public var retryDelays: [Duration] = []
    /// The share of customers without an appAccountToken whose app posts the purchase to customer-api.
    @_spi(Testing) public var appPostShare = 0.0
    /// The share of DID_RENEW and EXPIRED notifications the App Store loses for good.
    @_spi(Testing) public var lostShare = 0.0
    /// customer-api's base URL and an API key of the app, where the app posts its purchases.
    @_spi(Testing) public var customerAPIURL: String?
    @_spi(Testing) public var customerAPIKey: String?
    /// The share of purchases with a refund request open now (a fresh CONSUMPTION_REQUEST to answer in time).
    @_spi(Testing) public var openRefundRequestShare = 0.0
    /// The share of customers with an open refund request whose app recorded their consent (customer-api).
    @_spi(Testing) public var consentShare = 0.0
    /// Items per page of the API's paged answers (Apple: 20; tests use fewer to walk the pages).
    @_spi(Testing) public var apiPageSize = 20
    /// The share of the app's lapsed subscribers who come back with a promotional offer signed by customer-api.
    @_spi(Testing) public var offerPurchaseShare = 0.0
    /// The In-App Purchase keys offers may be signed with (App Store Connect's view of the team's keys), by key id.
    @_spi(Testing) public var offerPublicKeys: [String: P256.Signing.PublicKey] = [:]
    /// How long an uploaded retention message or image stays PENDING before App Review decides.
    @_spi(Testing) public var messageReviewDelay: Duration = .seconds(1)
    /// The performance test Apple runs against the real-time URL.
    @_spi(Testing) public var performanceTest = PerformanceTestConfig(
        maxConcurrentRequests: 10, totalRequests: 500, totalDuration: 5000, responseTimeThreshold: 700,
        successRateThreshold: 95)

    /// A configuration with Apple's defaults, verifying API tokens against `apiPublicKey`.
    @_spi(Testing) public init(apiPublicKey: P256.Signing.PublicKey) { self.apiPublicKey = apiPublicKey }
}

/// One sim run: the scenario, the App Store's state, the signer, and delivery.
@_spi(Testing) public struct Simulator: Sendable {
    @_spi(Testing) public let configuration: SimConfiguration
    @_spi(Testing) public let scenario: Scenario
    @_spi(Testing) public let store: SimStore
    /// Retention Messaging's side of App Store Connect.
    @_spi(Testing) public let messaging: SimMessagingStore
    @_spi(Testing) public let signer: SimSigner
    /// The OCSP responder of the sim's PKI.
    @_spi(Testing) public let ocsp: SimOCSP
    /// Every notification signed, in signing order.
    @_spi(Testing) public let signed: [SimDelivery.Item]
    /// The light delivery client, when the configuration asks for it.
    let poster: PlainHTTPPoster?

    /// Generates the scenario (events signed before now) and signs every notification with `pki`.
    @_spi(Testing) public init(configuration: SimConfiguration, pki: TestPKI, now: Date = Date()) throws {
        self.configuration = configuration
        self.scenario = Self.scenario(configuration, epoch: Int64(now.timeIntervalSince1970 * 1000) - 60_000)
        self.store = SimStore(scenario: self.scenario, pageSize: configuration.apiPageSize)
        self.messaging = SimMessagingStore(reviewDelay: configuration.messageReviewDelay)
        self.signer = SimSigner(
            signer: AppStoreSigner(pki: pki), bundleId: configuration.bundleId, appAppleId: configuration.appAppleId)
        self.ocsp = SimOCSP(pki: pki)
        self.poster = configuration.plainHTTPClient ? PlainHTTPPoster() : nil
        let signer = self.signer
        self.signed =
            configuration.signsNotifications
            ? try self.scenario.notifications.map {
                SimDelivery.Item(uuid: $0.uuid, signedPayload: try signer.sign($0))
            } : []
    }

    /// One scenario per environment, merged: notifications in signing order, purchases and expectations of both.
    static func scenario(_ configuration: SimConfiguration, epoch: Int64) -> Scenario {
        var merged = Scenario(notifications: [], purchases: [:], expected: [], lifeCycles: [:])
        for environment in configuration.environments {
            let generator = ScenarioGenerator(
                bundleId: configuration.bundleId, appAppleId: configuration.appAppleId, environment: environment,
                epoch: epoch,
                refundCarriesStatus: configuration.refundCarriesStatus)
            let alone = configuration.environments.count == 1 || environment == .production
            let customers = alone ? configuration.customers : max(1, configuration.customers / 4)
            let part = generator.generate(
                customers: customers, seed: configuration.seed ^ (environment == .production ? 0 : 0x5A4D_B0C5))
            merged.notifications += part.notifications
            merged.purchases.merge(part.purchases) { a, _ in a }
            merged.expected += part.expected
            for (name, count) in part.lifeCycles {
                merged.lifeCycles[(environment == .production ? "" : environment.rawValue + " ") + name, default: 0] +=
                    count
            }
        }
        merged.notifications.sort { ($0.signedDate, $0.uuid) < ($1.signedDate, $1.uuid) }
        merged.expected.sort()
        merged.applyAppSide(
            appPostShare: configuration.appPostShare, lostShare: configuration.lostShare, seed: configuration.seed)
        merged.addOpenRefundRequests(
            share: configuration.openRefundRequestShare, epoch: epoch, seed: configuration.seed)
        merged.addOfferPurchases(share: configuration.offerPurchaseShare, seed: configuration.seed)
        return merged
    }

    /// The order Apple delivers in: every notification, some twice, shuffled unless configured otherwise (seeded).
    @_spi(Testing) public func deliveryPlan() -> [SimDelivery.Item] {
        var random = SimRandom(seed: self.configuration.seed ^ 0xDE11_7E57)
        var plan = self.signed
        for item in self.signed where Double.random(in: 0..<1, using: &random) < self.configuration.duplicates {
            plan.append(item)
        }
        if self.configuration.shuffled { plan.shuffle(using: &random) }
        return plan
    }

    /// Registers the items as sent (notification history) and posts them.
    @_spi(Testing) public func deliver(
        _ items: [SimDelivery.Item], http: HTTPClient, to ingestURL: String, rate: Double? = nil,
        concurrency: Int? = nil,
        timeout: Duration = .seconds(10), progress: (@Sendable (String) -> Void)? = nil
    ) async -> SimDelivery.Report {
        await self.deliver(
            items, http: http, spreadOver: [ingestURL], rate: rate, concurrency: concurrency, timeout: timeout,
            progress: progress)
    }

    /// Registers the items as sent and posts them spread over `ingestURLs` in turn (a load balancer in front of
    /// ingest replicas).
    @_spi(Testing) public func deliver(
        _ items: [SimDelivery.Item], http: HTTPClient, spreadOver ingestURLs: [String], rate: Double? = nil,
        concurrency: Int? = nil,
        timeout: Duration = .seconds(10), progress: (@Sendable (String) -> Void)? = nil
    ) async -> SimDelivery.Report {
        await self.store.setNotificationURL(ingestURLs[0])
        let byUUID = Dictionary(self.scenario.notifications.map { ($0.uuid, $0) }, uniquingKeysWith: { a, _ in a })
        for item in items {
            let notification = byUUID[item.uuid]
            await self.store.register(
                item.signedPayload, uuid: item.uuid, environment: notification?.environment ?? .production,
                signedDate: notification?.signedDate ?? 0,
                transactionIds: Set(
                    [notification?.transaction?.transactionId, notification?.transaction?.originalTransactionId]
                        .compactMap { $0 }))
        }
        let delivery = SimDelivery(
            http: http, store: self.store, ingestURLs: ingestURLs, rate: rate ?? self.configuration.rate,
            concurrency: concurrency ?? self.configuration.concurrency, timeout: timeout, progress: progress,
            poster: self.poster)
        return await delivery.deliver(items)
    }

    /// Apple's retries, compressed: after each delay, re-posts every notification not yet delivered (and returns at
    /// once when every notification was delivered).
    @_spi(Testing) public func retryUndelivered(
        http: HTTPClient, to ingestURL: String, progress: (@Sendable (String) -> Void)? = nil
    ) async {
        await self.retryUndelivered(http: http, spreadOver: [ingestURL], progress: progress)
    }

    /// Apple's retries spread over `ingestURLs` in turn (a load balancer in front of ingest replicas).
    @_spi(Testing) public func retryUndelivered(
        http: HTTPClient, spreadOver ingestURLs: [String], progress: (@Sendable (String) -> Void)? = nil
    )
        async
    {
        for delay in self.configuration.retryDelays {
            let pending = await self.store.history(
                NotificationHistoryRequest(startDate: 0, endDate: .max, onlyFailures: true), environment: nil)
            // Nothing failed, nothing to wait for: Apple's schedule starts only for a notification that failed.
            guard !pending.isEmpty else { return }
            try? await Task.sleep(for: delay)
            progress?("  retrying \(pending.count) undelivered notifications")
            _ = await self.deliver(
                pending.map { SimDelivery.Item(uuid: $0.uuid, signedPayload: $0.signedPayload) }, http: http,
                spreadOver: ingestURLs,
                progress: progress)
        }
    }

    /// The API server: Hummingbird serving ``SimAPI`` on the configured address.
    @_spi(Testing) public func application(
        http: HTTPClient, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    )
        -> some ApplicationProtocol
    {
        let router = Router()
        let simulator = self
        let api = SimAPI(
            store: self.store, signer: self.signer,
            tokens: APITokenValidator(
                keys: [self.configuration.apiKeyID: self.configuration.apiPublicKey],
                issuerID: self.configuration.issuerID),
            deliverNow: { notification in
                let configured = simulator.configuration.ingestURL
                guard let url = configured == nil ? await simulator.store.notificationURL : configured,
                    let signed = try? simulator.signer.sign(notification)
                else { return }
                let item = SimDelivery.Item(uuid: notification.uuid, signedPayload: signed)
                await simulator.store.register(
                    signed, uuid: notification.uuid, environment: notification.environment,
                    signedDate: notification.signedDate,
                    transactionIds: Set(
                        [notification.transaction?.transactionId, notification.transaction?.originalTransactionId]
                            .compactMap { $0 }))
                _ = await SimDelivery(
                    http: http, store: simulator.store, ingestURLs: [url], rate: nil, concurrency: 1,
                    poster: simulator.poster
                )
                .post(item, to: url)
            })
        api.addRoutes(to: router)
        SimMessaging(
            store: self.messaging, simStore: self.store, signer: self.signer,
            tokens: APITokenValidator(
                keys: [self.configuration.apiKeyID: self.configuration.apiPublicKey],
                issuerID: self.configuration.issuerID),
            http: http, testConfig: self.configuration.performanceTest, logger: logger
        ).addRoutes(to: router)
        SimStoreKit(
            store: self.store, signer: self.signer, offerKeys: self.configuration.offerPublicKeys,
            issuerID: self.configuration.issuerID, deliverNow: api.deliverNow
        ).addRoutes(to: router)
        self.ocsp.addRoutes(to: router)
        return Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(self.configuration.host, port: self.configuration.port)),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) }, logger: logger)
    }
}
