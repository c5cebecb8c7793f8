import AppStoreAPI
import AppStoreModels
import Foundation

/// The stand-in's state, the source of truth for its API: the purchases, every notification it has tried
/// to deliver with its attempts (for notification history and `onlyFailures`), test notifications, the
/// faults to inject, and counts of the API calls it served.
@_spi(Testing) public actor SimStore {
    /// A notification the App Store has sent (or tried to).
    struct Sent: Sendable {
        @_spi(Testing) public var signedPayload: String
        @_spi(Testing) public var uuid: String
        @_spi(Testing) public var environment: Environment
        var signedDate: Int64
        var transactionIds: Set<String>
        var attempts: [SendAttemptItem] = []
        var delivered: Bool { self.attempts.contains { $0.sendAttemptResult == "SUCCESS" } }
    }

    /// Faults injected into the API (settable at run time through `POST /sim/faults`).
    @_spi(Testing) public struct Faults: Codable, Sendable, Equatable {
        /// The next this-many API calls answer 500 (errorCode 5000001).
        @_spi(Testing) public var serverErrors = 0
        /// Get All Subscription Statuses calls allowed per second; more get 429 with `Retry-After`.
        @_spi(Testing) public var statusRatePerSecond: Int?
        /// The next this-many status calls answer 429 regardless of the rate.
        @_spi(Testing) public var rateLimited = 0
        /// Get Transaction History calls allowed per second; more get 429 with `Retry-After` (Apple: 50 a second
        /// per app in Production).
        @_spi(Testing) public var historyRatePerSecond: Int?
        /// Once this many history calls were answered, the next ones wait until the fault is lifted: a test's way
        /// to stop a client at a known point without racing it.
        @_spi(Testing) public var holdHistoryAfter: Int?

        /// Faults as named; none by default.
        @_spi(Testing) public init(
            serverErrors: Int = 0, statusRatePerSecond: Int? = nil, rateLimited: Int = 0,
            historyRatePerSecond: Int? = nil, holdHistoryAfter: Int? = nil
        ) {
            self.serverErrors = serverErrors
            self.statusRatePerSecond = statusRatePerSecond
            self.rateLimited = rateLimited
            self.historyRatePerSecond = historyRatePerSecond
            self.holdHistoryAfter = holdHistoryAfter
        }
    }

    /// What the API served, for tests and the summary.
    @_spi(Testing) public struct Stats: Codable, Sendable {
        @_spi(Testing) public var calls: [String: Int] = [:]
        @_spi(Testing) public var statusCallsAnswered = 0
        @_spi(Testing) public var answersByStatus: [String: Int] = [:]
        /// The most status calls answered 200 within one wall-clock second.
        @_spi(Testing) public var maximumStatusCallsPerSecond = 0
        /// Get Transaction History calls answered (not refused), and how many wait on `holdHistoryAfter` now.
        @_spi(Testing) public var historyCallsAnswered = 0
        @_spi(Testing) public var historyCallsHeld = 0
        @_spi(Testing) public var rejectedTokens = 0
        /// Purchases with an offer StoreKit made (`bought`) or refused (`refused: <reason>`).
        @_spi(Testing) public var offers: [String: Int] = [:]
    }

    @_spi(Testing) public private(set) var purchases: [String: SimPurchase]
    /// Items per page of the API's paged answers (Apple: 20).
    let pageSize: Int
    fileprivate var originalByTransaction: [String: String] = [:]
    private var sent: [String: Sent] = [:]
    private var sentOrder: [String] = []
    @_spi(Testing) public private(set) var expected: [ExpectedEntitlement]
    var faults = Faults()
    @_spi(Testing) public private(set) var stats = Stats()
    private var statusSecond: Int64 = 0
    private var statusCallsThisSecond = 0
    private var historySecond: Int64 = 0
    private var historyCallsThisSecond = 0
    /// History calls waiting for `holdHistoryAfter` to be lifted.
    private var heldHistoryCalls: [CheckedContinuation<Void, Never>] = []
    private var testNotifications: [String: String] = [:]
    /// When each subscription was extended (epoch ms), and the answers by request identifier (idempotence).
    fileprivate var extensionDates: [String: [Int64]] = [:]
    fileprivate var extensionAnswers: [String: Int64] = [:]
    fileprivate var massExtensions: [String: MassExtendRenewalDateStatusResponse] = [:]
    fileprivate var massExtensionProducts: [String: String] = [:]
    /// Every consumption answer accepted, in order.
    @_spi(Testing) public fileprivate(set) var consumptionAnswers: [SimConsumptionAnswer] = []
    /// Purchases with a promotional offer still to be made, by ``offerKey(environment:appUserId:productId:)``.
    var pendingOffers: [String: OfferPurchase] = [:]
    /// Offer nonces already redeemed (a nonce is good for one purchase).
    var usedOfferNonces: Set<String> = []
    /// Where notifications sent at once go when the configuration names no ingest URL: the last URL delivered to.
    private(set) var notificationURL: String?

    /// Sets where notifications sent at once go (``Simulator/deliver(_:http:to:rate:concurrency:timeout:progress:)`` sets it).
    @_spi(Testing) public func setNotificationURL(_ url: String) { self.notificationURL = url }

    init(scenario: Scenario, pageSize: Int = 20) {
        self.pageSize = pageSize
        self.purchases = scenario.purchases
        self.expected = scenario.expected
        for offer in scenario.offerPurchases {
            self.pendingOffers[Self.offerKey(offer.environment, offer.appUserId, offer.productId)] = offer
        }
        for purchase in scenario.purchases.values {
            for transaction in purchase.transactions {
                self.originalByTransaction[transaction.transactionId!] = purchase.originalTransactionId
            }
        }
    }

    // MARK: Purchases

    /// The purchase any of its transaction ids names, in one environment (another environment's id is not found, as at Apple).
    @_spi(Testing) public func purchase(for transactionId: String, in environment: Environment) -> SimPurchase? {
        self.originalByTransaction[transactionId].flatMap { self.purchases[$0] }.flatMap {
            $0.environment == environment ? $0 : nil
        }
    }

    /// Makes an offer purchase: the subscription gains its new transaction (the API answers with it from now on) and
    /// the offer is no longer pending; returns the notification Apple sends for it.
    func redeem(_ offer: OfferPurchase, nonce: String, now: Int64) -> (SimNotification, JWSTransactionDecodedPayload)? {
        let key = Self.offerKey(offer.environment, offer.appUserId, offer.productId)
        guard self.pendingOffers[key] != nil, let purchase = self.purchases[offer.originalTransactionId] else {
            return nil
        }
        let (bought, notification) = purchase.buying(offer, now: now)
        self.purchases[offer.originalTransactionId] = bought
        self.originalByTransaction[offer.transactionId] = offer.originalTransactionId
        self.pendingOffers[key] = nil
        self.usedOfferNonces.insert(nonce)
        self.stats.offers["bought", default: 0] += 1
        return (notification, bought.transactions.last!)
    }

    /// Counts an offer StoreKit refused.
    func refuseOffer(_ reason: String) { self.stats.offers["refused: " + reason, default: 0] += 1 }

    /// The key of a pending offer purchase.
    static func offerKey(_ environment: Environment, _ appUserId: String, _ productId: String) -> String {
        "\(environment.rawValue) \(appUserId) \(productId)"
    }

    /// Sets a purchase's app account token (Set App Account Token).
    func setAppAccountToken(_ token: String, original: String) -> Bool {
        guard var purchase = self.purchases[original] else { return false }
        for index in purchase.transactions.indices { purchase.transactions[index].appAccountToken = token }
        self.purchases[original] = purchase
        return true
    }

    // MARK: Deliveries

    /// Records a notification as sent (before its first attempt).
    func register(
        _ signedPayload: String, uuid: String, environment: Environment, signedDate: Int64, transactionIds: Set<String>
    ) {
        guard self.sent[uuid] == nil else { return }
        self.sent[uuid] = Sent(
            signedPayload: signedPayload, uuid: uuid, environment: environment, signedDate: signedDate,
            transactionIds: transactionIds)
        self.sentOrder.append(uuid)
    }

    /// Records one delivery attempt's result (`SUCCESS`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, `TIMED_OUT`, …).
    func recordAttempt(uuid: String, result: String, at: Date = Date()) {
        self.sent[uuid]?.attempts.append(
            SendAttemptItem(attemptDate: Int64(at.timeIntervalSince1970 * 1000), sendAttemptResult: result))
    }

    /// Notification history as Get Notification History filters it (sent in `[start, end)` by signedDate).
    /// A notification whose first attempt has not happened yet is not in the history: it has not failed.
    /// `environment` nil: every environment (the sim's own retries).
    func history(_ request: NotificationHistoryRequest, environment: Environment?) -> [Sent] {
        self.sentOrder.compactMap { self.sent[$0] }.filter { item in
            (environment == nil || item.environment == environment) && !item.attempts.isEmpty
                && item.signedDate >= request.startDate && item.signedDate < request.endDate
                && (request.onlyFailures != true || !item.delivered)
                && (request.transactionId == nil || item.transactionIds.contains(request.transactionId!))
        }
    }

    /// How many sent notifications were never delivered.
    @_spi(Testing) public func undeliveredCount() -> Int { self.sent.values.filter { !$0.delivered }.count }

    /// Which of `uuids` were sent and never delivered.
    @_spi(Testing) public func undelivered(among uuids: Set<String>) -> Set<String> {
        uuids.filter { self.sent[$0].map { !$0.delivered } ?? false }
    }

    /// How many notifications have been tried at least once (delivered or not): delivery progress.
    @_spi(Testing) public func attemptedCount() -> Int { self.sent.values.filter { !$0.attempts.isEmpty }.count }

    // MARK: Test notifications

    func registerTest(token: String, uuid: String) { self.testNotifications[token] = uuid }
    func testNotification(token: String) -> Sent? { self.testNotifications[token].flatMap { self.sent[$0] } }

    // MARK: Faults and counting

    /// Counts a call and decides whether a fault answers it instead: (HTTP status, errorCode, Retry-After ms).
    func admit(endpoint: String, isStatusCall: Bool, now: Date = Date()) -> (Int, Int, Int64?)? {
        self.stats.calls[endpoint, default: 0] += 1
        if self.faults.serverErrors > 0 {
            self.faults.serverErrors -= 1
            return self.answered(500, APIErrorCode.generalInternalRetryable, nil)
        }
        guard isStatusCall else { return nil }
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        let second = millis / 1000
        if second != self.statusSecond {
            self.statusSecond = second
            self.statusCallsThisSecond = 0
        }
        let nextSecond = (second + 1) * 1000
        if self.faults.rateLimited > 0 {
            self.faults.rateLimited -= 1
            return self.answered(429, APIErrorCode.rateLimitExceeded, nextSecond)
        }
        if let limit = self.faults.statusRatePerSecond, self.statusCallsThisSecond >= limit {
            return self.answered(429, APIErrorCode.rateLimitExceeded, nextSecond)
        }
        self.statusCallsThisSecond += 1
        self.stats.statusCallsAnswered += 1
        self.stats.maximumStatusCallsPerSecond = max(self.stats.maximumStatusCallsPerSecond, self.statusCallsThisSecond)
        self.stats.answersByStatus["200", default: 0] += 1
        return nil
    }

    /// Counts a faulted answer.
    private func answered(_ status: Int, _ code: Int, _ retryAfter: Int64?) -> (Int, Int, Int64?) {
        self.stats.answersByStatus[String(status), default: 0] += 1
        return (status, code, retryAfter)
    }

    /// Counts a request refused for its bearer token.
    func countRejectedToken() { self.stats.rejectedTokens += 1 }
}

extension SimStore {
    /// Replaces the injected faults; history calls held by a hold the new faults lift go on.
    @_spi(Testing) public func setFaults(_ faults: Faults) {
        self.faults = faults
        if faults.holdHistoryAfter.map({ $0 > self.stats.historyCallsAnswered }) ?? true {
            let held = self.heldHistoryCalls
            self.heldHistoryCalls = []
            self.stats.historyCallsHeld = 0
            for call in held { call.resume() }
        }
    }

    /// Admits a Get Transaction History call: counted, held while `holdHistoryAfter` says so, then refused with
    /// 429 beyond `historyRatePerSecond` in its wall-clock second (or by another fault); nil when it is answered.
    func admitHistory() async -> (Int, Int, Int64?)? {
        if let fault = self.admit(endpoint: "history", isStatusCall: false) { return fault }
        if let hold = self.faults.holdHistoryAfter, self.stats.historyCallsAnswered >= hold {
            self.stats.historyCallsHeld += 1
            await withCheckedContinuation { self.heldHistoryCalls.append($0) }
        }
        let millis = Int64(Date().timeIntervalSince1970 * 1000)
        if millis / 1000 != self.historySecond {
            self.historySecond = millis / 1000
            self.historyCallsThisSecond = 0
        }
        if let limit = self.faults.historyRatePerSecond, self.historyCallsThisSecond >= limit {
            return self.answered(429, APIErrorCode.rateLimitExceeded, (self.historySecond + 1) * 1000)
        }
        self.historyCallsThisSecond += 1
        self.stats.historyCallsAnswered += 1
        return nil
    }
}

// MARK: - Support endpoints: orders, refunds, renewal-date extensions, consumption answers

extension SimStore {
    /// The transactions of an order (Look Up Order ID), in one environment.
    @_spi(Testing) public func transactions(ofOrder orderId: String, in environment: Environment)
        -> [JWSTransactionDecodedPayload]
    {
        self.purchases.values.filter { $0.environment == environment }.flatMap(\.transactions)
            .filter { SimOrders.orderId(for: $0.transactionId ?? "") == orderId }
    }

    /// Every refunded transaction of the customer who owns `transactionId`, in this app and environment, oldest
    /// refund first (Get Refund History).
    func refundedTransactions(of transactionId: String, in environment: Environment) -> [JWSTransactionDecodedPayload]?
    {
        guard let owner = self.purchase(for: transactionId, in: environment)?.customer else { return nil }
        return self.purchases.values.filter { $0.environment == environment && $0.customer == owner }.flatMap(
            \.transactions
        )
        .filter { $0.revocationDate != nil }
        .sorted {
            ($0.revocationDate!.millisecondsSince1970, $0.transactionId ?? "") < (
                $1.revocationDate!.millisecondsSince1970, $1.transactionId ?? ""
            )
        }
    }

    /// What an extension did to one subscription.
    enum ExtensionResult: Sendable {
        case extended(
            original: String, webOrderLineItemId: String?, effectiveDate: Int64, notification: SimNotification?)
        /// Apple's error: (HTTP status, errorCode).
        case refused(Int, Int)
    }

    /// Extends an active subscription's current period by `days` (at most twice in 365 days; a repeated
    /// `requestIdentifier` repeats the earlier answer without extending again). Returns the RENEWAL_EXTENDED
    /// notification the App Store sends.
    func extend(
        _ original: String, days: Int32, requestIdentifier: String, environment: Environment, now: Date = Date()
    ) -> ExtensionResult {
        guard var purchase = self.purchase(for: original, in: environment), purchase.originalTransactionId == original
        else {
            return .refused(404, 4_040_005)
        }
        if let earlier = self.extensionAnswers[environment.rawValue + "/" + requestIdentifier + "/" + original] {
            return .extended(
                original: original, webOrderLineItemId: purchase.transactions.last?.webOrderLineItemId,
                effectiveDate: earlier,
                notification: nil)
        }
        if purchase.transactions.first?.inAppOwnershipType == .assigned {
            return .refused(403, APIErrorCode.assignedExtensionIneligible)
        }
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        guard purchase.productType == .autoRenewableSubscription, purchase.status == .active,
            var latest = purchase.transactions.last,
            let expires = latest.expiresDate?.millisecondsSince1970, expires > millis
        else { return .refused(403, 4_030_004) }
        let recent = self.extensionDates[original, default: []].filter { $0 > millis - 365 * ScenarioGenerator.day }
        guard recent.count < 2 else { return .refused(403, 4_030_005) }
        let newExpiry = expires + Int64(days) * ScenarioGenerator.day
        latest.expiresDate = Timestamp(millisecondsSince1970: newExpiry)
        latest.signedDate = Timestamp(millisecondsSince1970: millis)
        purchase.transactions[purchase.transactions.count - 1] = latest
        purchase.renewal?.renewalDate = Timestamp(millisecondsSince1970: newExpiry)
        purchase.renewal?.signedDate = Timestamp(millisecondsSince1970: millis)
        self.purchases[original] = purchase
        self.extensionDates[original, default: []].append(millis)
        self.extensionAnswers[environment.rawValue + "/" + requestIdentifier + "/" + original] = newExpiry
        let notification = SimNotification(
            uuid: UUID().uuidString.lowercased(), type: "RENEWAL_EXTENDED", subtype: nil, signedDate: millis,
            transaction: latest,
            renewal: purchase.renewal, status: .active, customer: purchase.customer, environment: environment)
        return .extended(
            original: original, webOrderLineItemId: latest.webOrderLineItemId, effectiveDate: newExpiry,
            notification: notification)
    }

    /// The active subscriptions of a product in an environment that Apple may extend (what a mass extension covers;
    /// assigned ones are ineligible, 4030028).
    @_spi(Testing) public func activeSubscriptions(
        of productId: String, in environment: Environment, now: Date = Date()
    ) -> [String] {
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        return self.purchases.values.filter {
            $0.environment == environment && $0.productId == productId && $0.status == .active
                && $0.transactions.first?.inAppOwnershipType != .assigned
                && ($0.transactions.last?.expiresDate?.millisecondsSince1970 ?? 0) > millis
        }.map(\.originalTransactionId).sorted()
    }

    /// Starts, progresses and reads mass extensions (keyed by environment and request identifier).
    func startMassExtension(_ request: MassExtendRenewalDateRequest, environment: Environment) -> Bool {
        let key = environment.rawValue + "/" + request.requestIdentifier
        guard self.massExtensions[key] == nil else { return false }
        self.massExtensions[key] = MassExtendRenewalDateStatusResponse(
            requestIdentifier: request.requestIdentifier, complete: false, completeDate: nil, succeededCount: 0,
            failedCount: 0)
        self.massExtensionProducts[key] = request.productId
        return true
    }

    func recordMassExtension(_ requestIdentifier: String, environment: Environment, succeeded: Bool) {
        let key = environment.rawValue + "/" + requestIdentifier
        if succeeded {
            self.massExtensions[key]?.succeededCount? += 1
        } else {
            self.massExtensions[key]?.failedCount? += 1
        }
    }

    func completeMassExtension(_ requestIdentifier: String, environment: Environment, at: Int64)
        -> MassExtendRenewalDateStatusResponse?
    {
        let key = environment.rawValue + "/" + requestIdentifier
        self.massExtensions[key]?.complete = true
        self.massExtensions[key]?.completeDate = at
        return self.massExtensions[key]
    }

    func massExtension(productId: String, requestIdentifier: String, environment: Environment)
        -> MassExtendRenewalDateStatusResponse?
    {
        let key = environment.rawValue + "/" + requestIdentifier
        return self.massExtensionProducts[key] == productId ? self.massExtensions[key] : nil
    }

    /// Refunds one transaction now (as Apple does when it grants a refund request), for scenarios and tests.
    @_spi(Testing) public func refund(_ transactionId: String, at millis: Int64) {
        guard let original = self.originalByTransaction[transactionId], var purchase = self.purchases[original],
            let index = purchase.transactions.firstIndex(where: { $0.transactionId == transactionId })
        else { return }
        purchase.transactions[index].revocationDate = Timestamp(millisecondsSince1970: millis)
        purchase.transactions[index].rawRevocationReason = 0
        self.purchases[original] = purchase
    }

    /// Records a consumption answer the API accepted.
    func recordConsumptionAnswer(_ transactionId: String, body: String, version: String, at: Date = Date()) {
        self.consumptionAnswers.append(
            .init(
                transactionId: transactionId, version: version, at: Int64(at.timeIntervalSince1970 * 1000), body: body))
    }
}

/// A consumption answer as the sim received it (`GET /sim/consumption`).
@_spi(Testing) public struct SimConsumptionAnswer: Codable, Sendable {
    @_spi(Testing) public var transactionId: String
    @_spi(Testing) public var version: String
    var at: Int64
    /// The JSON body exactly as sent.
    @_spi(Testing) public var body: String
}
