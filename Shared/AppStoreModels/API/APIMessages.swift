// MARK: - Wire types of the App Store Server API (JSON bodies exactly as Apple sends and accepts them)

/// Get All Subscription Statuses: `GET /inApps/v1/subscriptions/{transactionId}`.
public struct StatusResponse: Codable, Hashable, Sendable {
    public var environment: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var data: [SubscriptionGroupIdentifierItem]

    public init(environment: String?, bundleId: String?, appAppleId: Int64?, data: [SubscriptionGroupIdentifierItem]) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}

/// One subscription group's newest transactions.
public struct SubscriptionGroupIdentifierItem: Codable, Hashable, Sendable {
    public var subscriptionGroupIdentifier: String?
    public var lastTransactions: [LastTransactionsItem]

    public init(subscriptionGroupIdentifier: String?, lastTransactions: [LastTransactionsItem]) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}

/// The status of one subscription and its newest signed transaction and renewal info.
public struct LastTransactionsItem: Codable, Hashable, Sendable {
    /// The raw status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
    public var status: Int32?
    public var originalTransactionId: String?
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?

    public init(
        status: Int32?, originalTransactionId: String?, signedTransactionInfo: String?, signedRenewalInfo: String?
    ) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}

/// Get Transaction Info: `GET /inApps/v1/transactions/{transactionId}`.
public struct TransactionInfoResponse: Codable, Hashable, Sendable {
    public var signedTransactionInfo: String?
    public init(signedTransactionInfo: String?) { self.signedTransactionInfo = signedTransactionInfo }
}

/// Get App Transaction Info (API 1.17): `GET /inApps/v1/transactions/appTransactions/{transactionId}`.
public struct AppTransactionInfoResponse: Codable, Hashable, Sendable {
    public var signedAppTransactionInfo: String?
    public init(signedAppTransactionInfo: String?) { self.signedAppTransactionInfo = signedAppTransactionInfo }
}

/// One page of Get Transaction History v2: `GET /inApps/v2/history/{transactionId}?revision=…`.
public struct HistoryResponse: Codable, Hashable, Sendable {
    public var revision: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var environment: String?
    public var hasMore: Bool?
    public var signedTransactions: [String]

    public init(
        revision: String?, bundleId: String?, appAppleId: Int64?, environment: String?, hasMore: Bool?,
        signedTransactions: [String]
    ) {
        self.revision = revision
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.hasMore = hasMore
        self.signedTransactions = signedTransactions
    }
}

/// The body of Get Notification History: `POST /inApps/v1/notifications/history?paginationToken=…`.
/// `transactionId` and `notificationType` cannot be combined (4000019).
public struct NotificationHistoryRequest: Codable, Hashable, Sendable {
    /// Milliseconds since 1970, inclusive.
    public var startDate: Int64
    /// Milliseconds since 1970, exclusive.
    public var endDate: Int64
    public var notificationType: String?
    public var notificationSubtype: String?
    public var transactionId: String?
    /// Only notifications the App Store failed to deliver (and has not delivered since).
    public var onlyFailures: Bool?

    public init(
        startDate: Int64, endDate: Int64, notificationType: String? = nil, notificationSubtype: String? = nil,
        transactionId: String? = nil, onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}

/// One page of notification history (at most 20 items).
public struct NotificationHistoryResponse: Codable, Hashable, Sendable {
    public var paginationToken: String?
    public var hasMore: Bool?
    public var notificationHistory: [NotificationHistoryResponseItem]

    public init(paginationToken: String?, hasMore: Bool?, notificationHistory: [NotificationHistoryResponseItem]) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}

/// A sent notification and its delivery attempts.
public struct NotificationHistoryResponseItem: Codable, Hashable, Sendable {
    public var sendAttempts: [SendAttemptItem]?
    public var signedPayload: String?

    public init(sendAttempts: [SendAttemptItem]?, signedPayload: String?) {
        self.sendAttempts = sendAttempts
        self.signedPayload = signedPayload
    }
}

/// One delivery attempt: when, and what happened (`SUCCESS`, `TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, …).
public struct SendAttemptItem: Codable, Hashable, Sendable {
    public var attemptDate: Int64?
    public var sendAttemptResult: String?

    public init(attemptDate: Int64?, sendAttemptResult: String?) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}

/// Request a Test Notification: `POST /inApps/v1/notifications/test`.
public struct SendTestNotificationResponse: Codable, Hashable, Sendable {
    public var testNotificationToken: String?
    public init(testNotificationToken: String?) { self.testNotificationToken = testNotificationToken }
}

/// Get Test Notification Status: `GET /inApps/v1/notifications/test/{token}`.
public struct CheckTestNotificationResponse: Codable, Hashable, Sendable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]?

    public init(signedPayload: String?, sendAttempts: [SendAttemptItem]?) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}

/// Send Consumption Information (v2): `PUT /inApps/v2/transactions/consumption/{transactionId}`.
/// Answer within 12 hours of a CONSUMPTION_REQUEST, and only when the customer consented.
public struct ConsumptionRequest: Codable, Hashable, Sendable {
    public var customerConsented: Bool
    /// Milliunits (0…100000); not for auto-renewables.
    public var consumptionPercentage: Int32?
    /// `DELIVERED`, `UNDELIVERED_QUALITY_ISSUE`, `UNDELIVERED_WRONG_ITEM`, `UNDELIVERED_SERVER_OUTAGE`, `UNDELIVERED_OTHER`.
    public var deliveryStatus: String
    /// `DECLINE`, `GRANT_FULL`, `GRANT_PRORATED`.
    public var refundPreference: String?
    public var sampleContentProvided: Bool

    public init(
        customerConsented: Bool, consumptionPercentage: Int32? = nil, deliveryStatus: String,
        refundPreference: String? = nil,
        sampleContentProvided: Bool
    ) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }
}

/// Set App Account Token: `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
public struct UpdateAppAccountTokenRequest: Codable, Hashable, Sendable {
    /// A UUID (4000183 otherwise).
    public var appAccountToken: String
    public init(appAccountToken: String) { self.appAccountToken = appAccountToken }
}

/// The JSON body of an error answer.
public struct ErrorPayload: Codable, Hashable, Sendable {
    public var errorCode: Int?
    public var errorMessage: String?
    public init(errorCode: Int?, errorMessage: String?) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}
