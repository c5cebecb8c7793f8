// MARK: - Look Up Order ID, Get Refund History, renewal-date extensions (Apple's JSON bodies)

/// Look Up Order ID: `GET /inApps/v1/lookup/{orderId}`. `status` 0: valid order id, 1: invalid.
public struct OrderLookupResponse: Codable, Hashable, Sendable {
    public var status: Int32
    public var signedTransactions: [String]

    public init(status: Int32, signedTransactions: [String]) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}

/// Get Refund History (v2): `GET /inApps/v2/refund/lookup/{transactionId}?revision`, at most 20 per page,
/// oldest revocation first.
public struct RefundHistoryResponse: Codable, Hashable, Sendable {
    public var signedTransactions: [String]
    public var revision: String?
    public var hasMore: Bool

    public init(signedTransactions: [String], revision: String?, hasMore: Bool) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}

/// Extend a Subscription Renewal Date: `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
/// `extendByDays` 1…90; `extendReasonCode` 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
public struct ExtendRenewalDateRequest: Codable, Hashable, Sendable {
    public var extendByDays: Int32
    public var extendReasonCode: Int32
    /// At most 128 characters; the same identifier repeats the same extension (idempotent).
    public var requestIdentifier: String

    public init(extendByDays: Int32, extendReasonCode: Int32, requestIdentifier: String) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }
}

/// The answer to Extend a Subscription Renewal Date.
public struct ExtendRenewalDateResponse: Codable, Hashable, Sendable {
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var success: Bool?
    /// The new renewal date (epoch ms).
    public var effectiveDate: Int64?

    public init(originalTransactionId: String?, webOrderLineItemId: String?, success: Bool?, effectiveDate: Int64?) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}

/// Extend Renewal Dates for All Active Subscribers: `POST /inApps/v1/subscriptions/extend/mass`.
public struct MassExtendRenewalDateRequest: Codable, Hashable, Sendable {
    public var extendByDays: Int32
    public var extendReasonCode: Int32
    public var requestIdentifier: String
    public var productId: String
    /// ISO 3166-1 alpha-3 storefronts; nil: every storefront.
    public var storefrontCountryCodes: [String]?

    public init(
        extendByDays: Int32, extendReasonCode: Int32, requestIdentifier: String, productId: String,
        storefrontCountryCodes: [String]? = nil
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.productId = productId
        self.storefrontCountryCodes = storefrontCountryCodes
    }
}

/// The answer to a mass extension request.
public struct MassExtendRenewalDateResponse: Codable, Hashable, Sendable {
    public var requestIdentifier: String
    public init(requestIdentifier: String) { self.requestIdentifier = requestIdentifier }
}

/// Get Status of Subscription Renewal Date Extensions:
/// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
public struct MassExtendRenewalDateStatusResponse: Codable, Hashable, Sendable {
    public var requestIdentifier: String?
    public var complete: Bool?
    public var completeDate: Int64?
    public var succeededCount: Int64?
    public var failedCount: Int64?

    public init(
        requestIdentifier: String?, complete: Bool?, completeDate: Int64?, succeededCount: Int64?, failedCount: Int64?
    ) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}

/// Send Consumption Information V1: `PUT /inApps/v1/transactions/consumption/{transactionId}`, with Apple's
/// coded buckets (0 is "undeclared" everywhere): `accountTenure` and `playTime` 0–7, `consumptionStatus` 0–3,
/// `deliveryStatus` 0–5, `lifetimeDollarsPurchased`/`Refunded` 0–7, `platform` 0–2, `refundPreference` 0–3,
/// `userStatus` 0–4.
public struct ConsumptionRequestV1: Codable, Hashable, Sendable {
    public var accountTenure: Int32
    /// A UUID, or the empty string when the purchase has none.
    public var appAccountToken: String
    public var consumptionStatus: Int32
    public var customerConsented: Bool
    public var deliveryStatus: Int32
    public var lifetimeDollarsPurchased: Int32
    public var lifetimeDollarsRefunded: Int32
    public var platform: Int32
    public var playTime: Int32
    public var refundPreference: Int32
    public var sampleContentProvided: Bool
    public var userStatus: Int32

    public init(
        accountTenure: Int32, appAccountToken: String, consumptionStatus: Int32, customerConsented: Bool,
        deliveryStatus: Int32,
        lifetimeDollarsPurchased: Int32, lifetimeDollarsRefunded: Int32, platform: Int32, playTime: Int32,
        refundPreference: Int32,
        sampleContentProvided: Bool, userStatus: Int32
    ) {
        self.accountTenure = accountTenure
        self.appAccountToken = appAccountToken
        self.consumptionStatus = consumptionStatus
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.platform = platform
        self.playTime = playTime
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
        self.userStatus = userStatus
    }
}
