import AppStoreAPI
import AppStoreModels
import Foundation

/// The stand-in's state, the source of truth for its API: the purchases, every notification it has tried
/// to deliver with its attempts (for notification history and `onlyFailures`), test notifications, the
/// faults to inject, and counts of the API calls it served.
actor SimStore {
    /// A notification the App Store has sent (or tried to).
    struct Sent: Sendable {
        var signedPayload: String
        var uuid: String
        var environment: Environment
        var signedDate: Int64
        var transactionIds: Set<String>
        var attempts: [SendAttemptItem] = []
        var delivered: Bool { self.attempts.contains { $0.sendAttemptResult == "SUCCESS" } }
    }

    /// Faults injected into the API (settable at run time through `POST /sim/faults`).
    struct Faults: Codable, Sendable, Equatable {
        /// The next this-many API calls answer 500 (errorCode 5000001).
        var serverErrors = 0
        /// Get All Subscription Statuses calls allowed per second; more get 429 with `Retry-After`.
        var statusRatePerSecond: Int?
        /// The next this-many status calls answer 429 regardless of the rate.
        var rateLimited = 0
    }

    /// What the API served, for tests and the summary.
    struct Stats: Codable, Sendable {
        var calls: [String: Int] = [:]
        var statusCallsAnswered = 0
        var answersByStatus: [String: Int] = [:]
        /// The most status calls answered 200 within one wall-clock second.
        var maximumStatusCallsPerSecond = 0
        var rejectedTokens = 0
    }

    private(set) var purchases: [String: SimPurchase]
    private var originalByTransaction: [String: String] = [:]
    private var sent: [String: Sent] = [:]
    private var sentOrder: [String] = []
    private(set) var expected: [ExpectedEntitlement]
    var faults = Faults()
    private(set) var stats = Stats()
    private var statusSecond: Int64 = 0
    private var statusCallsThisSecond = 0
    private var testNotifications: [String: String] = [:]

    init(scenario: Scenario) {
        self.purchases = scenario.purchases
        self.expected = scenario.expected
        for purchase in scenario.purchases.values {
            for transaction in purchase.transactions { self.originalByTransaction[transaction.transactionId!] = purchase.originalTransactionId }
        }
    }

    // MARK: Purchases

    /// The purchase any of its transaction ids names, in one environment (another environment's id is not found, as at Apple).
    func purchase(for transactionId: String, in environment: Environment) -> SimPurchase? {
        self.originalByTransaction[transactionId].flatMap { self.purchases[$0] }.flatMap { $0.environment == environment ? $0 : nil }
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
    func register(_ signedPayload: String, uuid: String, environment: Environment, signedDate: Int64, transactionIds: Set<String>) {
        guard self.sent[uuid] == nil else { return }
        self.sent[uuid] = Sent(signedPayload: signedPayload, uuid: uuid, environment: environment, signedDate: signedDate,
                               transactionIds: transactionIds)
        self.sentOrder.append(uuid)
    }

    /// Records one delivery attempt's result (`SUCCESS`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, `TIMED_OUT`, …).
    func recordAttempt(uuid: String, result: String, at: Date = Date()) {
        self.sent[uuid]?.attempts.append(SendAttemptItem(attemptDate: Int64(at.timeIntervalSince1970 * 1000), sendAttemptResult: result))
    }

    /// Notification history as Get Notification History filters it (sent in `[start, end)` by signedDate).
    /// A notification whose first attempt has not happened yet is not in the history: it has not failed.
    /// `environment` nil: every environment (the sim's own retries).
    func history(_ request: NotificationHistoryRequest, environment: Environment?) -> [Sent] {
        self.sentOrder.compactMap { self.sent[$0] }.filter { item in
            (environment == nil || item.environment == environment) && !item.attempts.isEmpty && item.signedDate >= request.startDate && item.signedDate < request.endDate
                && (request.onlyFailures != true || !item.delivered)
                && (request.transactionId == nil || item.transactionIds.contains(request.transactionId!))
        }
    }

    /// How many sent notifications were never delivered.
    func undeliveredCount() -> Int { self.sent.values.filter { !$0.delivered }.count }

    /// How many notifications have been tried at least once (delivered or not): delivery progress.
    func attemptedCount() -> Int { self.sent.values.filter { !$0.attempts.isEmpty }.count }

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
    /// Replaces the injected faults.
    func setFaults(_ faults: Faults) { self.faults = faults }
}
