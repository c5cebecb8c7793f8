public import AppStoreModels
import Foundation

// MARK: - A consumption answer on its way to Apple, and what became of it

/// What the entitlement-updater asks refund-resolver to send (through the outbox, on the status-requests
/// topic): the computed body for Send Consumption Information, and the deadline it must beat.
public struct ConsumptionAnswer: Codable, Hashable, Sendable {
    /// The value's schema name and version (status requests on the same topic have no `schema` field).
    public static let schema = "appstore.consumption.answer/v1"

    public var schema: String = Self.schema
    public var transactionId: String
    public var originalTransactionId: String
    public var environment: String
    public var bundleId: String
    /// The CONSUMPTION_REQUEST that asked (the first one, if Apple asked again).
    public var notificationUUID: String
    /// signedDate of the request + 12 hours (epoch ms): after it Apple no longer wants the answer.
    public var deadline: Int64
    /// `v1` or `v2`: which body is set.
    public var apiVersion: String
    public var v2: ConsumptionRequest?
    public var v1: ConsumptionRequestV1?

    public init(
        transactionId: String, originalTransactionId: String, environment: String, bundleId: String,
        notificationUUID: String,
        deadline: Int64, apiVersion: String, v2: ConsumptionRequest?, v1: ConsumptionRequestV1?
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.bundleId = bundleId
        self.notificationUUID = notificationUUID
        self.deadline = deadline
        self.apiVersion = apiVersion
        self.v2 = v2
        self.v1 = v1
    }

    /// One answer per request: transaction, environment, app and the CONSUMPTION_REQUEST that opened it.
    public var requestId: String {
        "consumption:\(self.environment)/\(self.bundleId)/\(self.transactionId)/\(self.notificationUUID)"
    }
}

/// What refund-resolver reports back (to the verified topic, keyed by the purchase, applied by the updater):
/// `sent` (Apple accepted it), `late` (the deadline passed before it could be sent), `failed` (Apple refused it,
/// or retries ran out), with the attempts made and Apple's answer.
public struct ConsumptionOutcome: Codable, Hashable, Sendable {
    public static let schema = "appstore.consumption.outcome/v1"

    public var schema: String = Self.schema
    public var transactionId: String
    public var originalTransactionId: String
    public var environment: String
    public var bundleId: String
    /// The CONSUMPTION_REQUEST the answer was for (a later request on the same transaction opens a new one).
    public var notificationUUID: String
    public var status: String
    public var attempts: Int
    /// When the outcome was reached (epoch ms).
    public var at: Int64
    public var detail: String?

    public init(answer: ConsumptionAnswer, status: String, attempts: Int, at: Int64, detail: String?) {
        self.transactionId = answer.transactionId
        self.originalTransactionId = answer.originalTransactionId
        self.environment = answer.environment
        self.bundleId = answer.bundleId
        self.notificationUUID = answer.notificationUUID
        self.status = status
        self.attempts = attempts
        self.at = at
        self.detail = detail
    }

    /// Canonical JSON bytes.
    public func encoded() throws -> [UInt8] { Array(try AppStoreJSON.makeCanonicalEncoder().encode(self)) }
}

/// What the app team records about a customer for consumption answers (`PUT …/consumption-facts` on customer-api,
/// written to the verified topic keyed by the customer, stored by the updater in `consumption_facts`): the
/// customer's consent above all (Apple: no consent, no answer), and optionally play time, delivery, consumption
/// and user status, for the customer or one transaction.
public struct ConsumptionFactsRecord: Codable, Hashable, Sendable {
    public static let schema = "appstore.consumption.facts/v1"
    public static let deliveryStatuses = [
        "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
        "UNDELIVERED_OTHER",
    ]

    public var schema: String = Self.schema
    public var environment: String
    public var bundleId: String
    public var customer: String
    /// What kind of id ``customer`` is: `appUserId` (nil: the default; resolved through the purchase's binding),
    /// `appAccountToken` or `originalTransactionId`. One kind never matches another.
    public var customerKind: String?
    /// Empty: facts about the customer; else about this transaction only.
    public var transactionId: String
    public var customerConsented: Bool
    public var playTimeMinutes: Int64?
    public var deliveryStatus: String?
    public var consumptionPercentage: Int32?
    public var userStatus: Int32?

    public init(
        environment: String, bundleId: String, customer: String, customerKind: String? = nil, transactionId: String,
        customerConsented: Bool,
        playTimeMinutes: Int64?,
        deliveryStatus: String?, consumptionPercentage: Int32?, userStatus: Int32?
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.customer = customer
        self.customerKind = customerKind
        self.transactionId = transactionId
        self.customerConsented = customerConsented
        self.playTimeMinutes = playTimeMinutes
        self.deliveryStatus = deliveryStatus
        self.consumptionPercentage = consumptionPercentage
        self.userStatus = userStatus
    }

    /// Why the facts are not acceptable, or nil.
    public var problem: String? {
        if !Self.customerKinds.contains(self.kind) {
            return "the customer's idType must be one of \(Self.customerKinds)"
        }
        if let status = self.deliveryStatus, !Self.deliveryStatuses.contains(status) {
            return "deliveryStatus must be one of \(Self.deliveryStatuses)"
        }
        if let value = self.consumptionPercentage, !(0...100_000).contains(value) {
            return "consumptionPercentage must be 0…100000 (milliunits)"
        }
        if let value = self.userStatus, !(0...4).contains(value) { return "userStatus must be 0…4" }
        if let value = self.playTimeMinutes, value < 0 { return "playTimeMinutes must not be negative" }
        return nil
    }

    /// The kinds of id a customer may be named by.
    public static let customerKinds = ["appUserId", "appAccountToken", "originalTransactionId"]

    /// ``customerKind``, `appUserId` when unset.
    public var kind: String { self.customerKind ?? "appUserId" }

    /// Canonical JSON bytes.
    public func encoded() throws -> [UInt8] { Array(try AppStoreJSON.makeCanonicalEncoder().encode(self)) }
}
