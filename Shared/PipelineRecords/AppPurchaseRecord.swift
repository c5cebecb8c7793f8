public import AppStoreModels
import Foundation

/// The value `customer-api` (and `iapctl resync`) writes to the verified topic when the app or the team's
/// backend hands over a purchase: one verified transaction (from StoreKit 2's `jwsRepresentation`, or looked
/// up through the App Store Server API by id or receipt) and the app user it belongs to. Keyed like the
/// subscription's notifications (its `originalTransactionId`) so the updater applies it in order with them.
public struct AppPurchaseRecord: Codable, Hashable, Sendable {
    /// The value's schema name and version (also in the `schema` header).
    public static let schema = "appstore.app.purchase/v1"

    /// Where the transaction came from.
    public enum Source: String, Codable, Hashable, Sendable {
        /// A JWS the app posted (verified by customer-api as a notification's nested JWS is).
        case signedTransaction = "signed-transaction"
        /// A transaction id looked up with Get Transaction Info.
        case transactionId = "transaction-id"
        /// A StoreKit 1 receipt: its transaction ids, then Get Transaction History.
        case appReceipt = "app-receipt"
        /// `iapctl resync`.
        case resync
    }

    /// What to do when the purchase already belongs to another customer (see ``PurchaseOwnership``).
    public enum ConflictPolicy: String, Codable, Hashable, Sendable {
        /// Move it to the new user when the record carries a ``TransferProof`` (an `entitlement.customer-changed`
        /// event says from whom to whom); without one it is refused like `refuse`.
        case transfer
        /// Leave it where it is; the request is refused (409).
        case refuse
    }

    public var schema: String = Self.schema
    /// One request can carry several purchases (a receipt); each record of it shares this id.
    public var requestId: String
    /// The app's own user id to bind the purchase to; nil when the caller only imports facts (resync without a user).
    public var appUserId: String?
    public var onConflict: ConflictPolicy
    /// Why the purchase may move from another customer (checked by customer-api, checked again by the updater).
    public var transferProof: TransferProof?
    public var source: Source
    public var environment: String
    /// The subscription's (or purchase's) `originalTransactionId`: the Kafka key.
    public var subject: String
    /// The verified transaction and its signed original.
    public var transaction: JWSTransactionDecodedPayload
    public var signedTransactionInfo: String

    public init(
        requestId: String, appUserId: String?, onConflict: ConflictPolicy, transferProof: TransferProof? = nil,
        source: Source,
        environment: String, transaction: JWSTransactionDecodedPayload, signedTransactionInfo: String
    ) {
        self.requestId = requestId
        self.appUserId = appUserId
        self.onConflict = onConflict
        self.transferProof = transferProof
        self.source = source
        self.environment = environment
        self.subject = transaction.originalTransactionId ?? transaction.transactionId ?? "unknown"
        self.transaction = transaction
        self.signedTransactionInfo = signedTransactionInfo
    }

    /// The app the purchase belongs to.
    public var bundleId: String { self.transaction.bundleId ?? "unknown" }

    /// When Apple signed the transaction (epoch ms).
    public var signedDate: Int64 { self.transaction.signedDate?.millisecondsSince1970 ?? 0 }

    /// The id under which the notification log records it (a redelivered record is a no-op).
    public var logID: String {
        Self.logID(requestId: self.requestId, transactionId: self.transaction.transactionId ?? self.subject)
    }

    /// The log id of one transaction of a request.
    public static func logID(requestId: String, transactionId: String) -> String {
        "app-purchase:\(requestId):\(transactionId)"
    }

    /// Canonical JSON bytes.
    public func encoded() throws -> [UInt8] {
        Array(try AppStoreJSON.makeCanonicalEncoder().encode(self))
    }
}
