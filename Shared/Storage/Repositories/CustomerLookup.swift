public import Foundation
public import Logging
public import PostgresNIO

/// What `customer-api` answers about a customer of one app: the entitlements as of the request time, each
/// subscription's state, and the purchases that are not subscriptions; per environment.
public struct CustomerView: Codable, Hashable, Sendable {
    /// An entitlement as of `asOf`.
    public struct Entitlement: Codable, Hashable, Sendable {
        public var environment: String
        public var entitlementId: String
        public var productId: String
        /// True when the last notification left it active, it is not revoked, and its end (expiry, or the end of
        /// the grace period) is after `asOf`; lifetime products have no end.
        public var active: Bool
        public var validFrom: Int64?
        public var validUntil: Int64?
        public var revokedAt: Int64?
        public var originalTransactionId: String
        public var ownershipType: String
    }

    /// A subscription's state as of its newest notification.
    public struct Subscription: Codable, Hashable, Sendable {
        public var environment: String
        public var originalTransactionId: String
        public var productId: String
        /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked (as Apple last reported it).
        public var status: Int32?
        public var expiresDate: Int64?
        public var gracePeriodExpiresDate: Int64?
        public var isInBillingRetry: Bool?
        public var autoRenewStatus: Int32?
        public var autoRenewProductId: String?
    }

    /// A purchase that is not an auto-renewable subscription (non-consumable, consumable, non-renewing).
    public struct Purchase: Codable, Hashable, Sendable {
        public var environment: String
        public var transactionId: String
        public var originalTransactionId: String
        public var productId: String
        public var productType: String?
        public var purchaseDate: Int64?
        public var revocationDate: Int64?
        public var quantity: Int32?
    }

    public var bundleId: String
    public var customer: String
    /// The instant the entitlements are evaluated at (epoch milliseconds).
    public var asOf: Int64
    public var entitlements: [Entitlement]
    public var subscriptions: [Subscription]
    public var purchases: [Purchase]

    /// Whether anything is known about the customer.
    public var isEmpty: Bool { self.entitlements.isEmpty && self.subscriptions.isEmpty && self.purchases.isEmpty }
}

/// Reads a customer's view from PostgreSQL (read-only: the entitlement-updater stays the only writer).
///
/// A customer is named by its appAccountToken or by an originalTransactionId of one of its purchases.
public struct CustomerLookup: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The customer's view in one app (one environment, or all when nil), as of `now`.
    public func view(bundleId: String, customer: String, environment: String? = nil, now: Date = Date()) async throws -> CustomerView {
        let asOf = Int64(now.timeIntervalSince1970 * 1000)
        let all = environment == nil
        let env = environment ?? ""
        var view = CustomerView(bundleId: bundleId, customer: customer, asOf: asOf, entitlements: [], subscriptions: [], purchases: [])
        let entitlements = try await self.client.query("""
            SELECT environment, entitlement_id, product_id, active AND revoked_at IS NULL AND (valid_until IS NULL OR valid_until > \(asOf)),
                   valid_from, valid_until, revoked_at, original_transaction_id, ownership_type
            FROM entitlements
            WHERE bundle_id = \(bundleId) AND (\(all) OR environment = \(env)) AND (customer = \(customer) OR original_transaction_id = \(customer))
            ORDER BY environment, entitlement_id, product_id
            """, logger: self.logger)
        var originals: Set<String> = [customer]
        for try await row in entitlements.decode((String, String, String, Bool, Int64?, Int64?, Int64?, String, String).self) {
            view.entitlements.append(.init(environment: row.0, entitlementId: row.1, productId: row.2, active: row.3, validFrom: row.4,
                                           validUntil: row.5, revokedAt: row.6, originalTransactionId: row.7, ownershipType: row.8))
            originals.insert(row.7)
        }
        let subscriptions = try await self.client.query("""
            SELECT environment, original_transaction_id, product_id, status, expires_date, grace_period_expires_date, is_in_billing_retry,
                   auto_renew_status, auto_renew_product_id
            FROM subscriptions
            WHERE bundle_id = \(bundleId) AND (\(all) OR environment = \(env))
              AND (customer = \(customer) OR original_transaction_id = ANY(\(Array(originals))))
            ORDER BY environment, original_transaction_id
            """, logger: self.logger)
        for try await row in subscriptions.decode((String, String, String, Int32?, Int64?, Int64?, Bool?, Int32?, String?).self) {
            view.subscriptions.append(.init(environment: row.0, originalTransactionId: row.1, productId: row.2, status: row.3, expiresDate: row.4,
                                            gracePeriodExpiresDate: row.5, isInBillingRetry: row.6, autoRenewStatus: row.7,
                                            autoRenewProductId: row.8))
        }
        let purchases = try await self.client.query("""
            SELECT environment, transaction_id, original_transaction_id, product_id, product_type, purchase_date, revocation_date, quantity
            FROM transactions
            WHERE bundle_id = \(bundleId) AND (\(all) OR environment = \(env))
              AND product_type IS DISTINCT FROM 'Auto-Renewable Subscription'
              AND (lower(app_account_token) = lower(\(customer)) OR original_transaction_id = ANY(\(Array(originals))))
            ORDER BY environment, purchase_date, transaction_id
            """, logger: self.logger)
        for try await row in purchases.decode((String, String, String, String, String?, Int64?, Int64?, Int32?).self) {
            view.purchases.append(.init(environment: row.0, transactionId: row.1, originalTransactionId: row.2, productId: row.3, productType: row.4,
                                        purchaseDate: row.5, revocationDate: row.6, quantity: row.7))
        }
        return view
    }
}
