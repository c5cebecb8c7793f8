public import Foundation
public import Logging
public import PostgresNIO

/// What `customer-api` answers about a customer of one app: the entitlements as of the request time, each
/// subscription's state, and the purchases that are not subscriptions; per environment. This is the JSON's
/// shape; PostgreSQL builds the JSON itself (see ``CustomerLookup``), and the tests decode it with this type.
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
        /// The next renewal's price as an exact decimal, and its currency (renewal info).
        public var renewalPrice: String?
        public var currency: String?
        /// The discount of the offer the next renewal is priced with (renewal info).
        public var offerDiscountType: String?
        /// Win-back offers Apple lists for this subscription (renewal info's `eligibleWinBackOfferIds`).
        public var eligibleWinBackOfferIds: [String]?
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
}

/// A customer's view as JSON text, built by PostgreSQL: the three arrays of ``CustomerView`` in its field names.
public struct CustomerViewJSON: Sendable {
    public var entitlements: String
    public var subscriptions: String
    public var purchases: String

    /// Whether anything is known about the customer.
    public var isEmpty: Bool { self.entitlements == "[]" && self.subscriptions == "[]" && self.purchases == "[]" }
}

/// The kind of id a look-up names. Kinds never match each other: an app user id chosen to equal someone's
/// originalTransactionId or appAccountToken reads only the purchases bound to that app user.
public enum CustomerIDKind: String, CaseIterable, Sendable {
    /// The app's own user id: the purchases bound to it (`customer_bindings`).
    case appUserId
    /// The appAccountToken Apple signed into the purchases (compared lowercased).
    case appAccountToken
    /// One purchase, by its originalTransactionId (with the subscription the App Store migrated it to, if any).
    case originalTransactionId
}

/// Reads a customer's view from PostgreSQL in one statement (read-only: the entitlement-updater stays the
/// only writer). A customer is named by an id of one ``CustomerIDKind``.
public struct CustomerLookup: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The customer's view in one app (one environment, or all when nil) as of `asOf` (epoch milliseconds),
    /// as the JSON arrays of ``CustomerView``.
    public func view(bundleId: String, customer: String, kind: CustomerIDKind, environment: String? = nil, asOf: Int64)
        async throws
        -> CustomerViewJSON
    {
        let statement = CustomerViewStatement(
            bundleId: bundleId, customer: customer, kind: kind, environment: environment, asOf: asOf)
        var view = CustomerViewJSON(entitlements: "[]", subscriptions: "[]", purchases: "[]")
        for try await row in try await self.client.execute(statement, logger: self.logger) { view = row }
        return view
    }
}

/// The look-up as a prepared statement: parsed and planned once per connection (planning alone cost more than
/// running it). The purchases the id names (`o`: environment and originalTransactionId, by the id's kind only)
/// are collected first; every table is then reached through its (bundle_id, original_transaction_id) index with
/// `= ANY(ARRAY(…))`, and each row must match a purchase of `o` in its own environment.
struct CustomerViewStatement: PostgresPreparedStatement {
    typealias Row = CustomerViewJSON

    static let sql = """
        WITH o AS (
            SELECT environment, original_transaction_id FROM customer_bindings
            WHERE $6 = 'appUserId' AND bundle_id = $1 AND ($3 OR environment = $4) AND app_user_id = $2
            UNION
            SELECT DISTINCT environment, original_transaction_id FROM transactions
            WHERE $6 = 'appAccountToken' AND bundle_id = $1 AND ($3 OR environment = $4) AND lower(app_account_token) = lower($2)
            UNION
            SELECT DISTINCT environment, original_transaction_id FROM entitlements
            WHERE $6 = 'appAccountToken' AND bundle_id = $1 AND ($3 OR environment = $4) AND customer = lower($2)
            UNION
            SELECT NULL, $2 WHERE $6 = 'originalTransactionId'
            UNION
            SELECT environment, original_transaction_id FROM subscription_migrations
            WHERE $6 = 'originalTransactionId' AND bundle_id = $1 AND ($3 OR environment = $4) AND previous_original_transaction_id = $2
        ), e AS (
            SELECT environment, entitlement_id, product_id,
                   active AND revoked_at IS NULL AND (valid_until IS NULL OR valid_until > $5) AS active_now,
                   valid_from, valid_until, revoked_at, original_transaction_id, ownership_type
            FROM entitlements x
            WHERE bundle_id = $1 AND ($3 OR environment = $4) AND original_transaction_id = ANY(ARRAY(SELECT original_transaction_id FROM o))
              AND EXISTS (SELECT 1 FROM o WHERE o.original_transaction_id = x.original_transaction_id
                                              AND (o.environment IS NULL OR o.environment = x.environment))
        )
        SELECT
            COALESCE((SELECT json_agg(json_build_object(
                'environment', environment, 'entitlementId', entitlement_id, 'productId', product_id, 'active', active_now,
                'validFrom', valid_from, 'validUntil', valid_until, 'revokedAt', revoked_at,
                'originalTransactionId', original_transaction_id, 'ownershipType', ownership_type)
                ORDER BY environment, entitlement_id, product_id) FROM e), '[]')::text,
            COALESCE((SELECT json_agg(json_build_object(
                'environment', x.environment, 'originalTransactionId', x.original_transaction_id, 'productId', x.product_id,
                'status', x.status, 'expiresDate', x.expires_date, 'gracePeriodExpiresDate', x.grace_period_expires_date,
                'isInBillingRetry', x.is_in_billing_retry, 'autoRenewStatus', x.auto_renew_status, 'autoRenewProductId', x.auto_renew_product_id,
                'renewalPrice', trim_scale(r.renewal_price::numeric / 1000)::text, 'currency', r.currency,
                'offerDiscountType', r.offer_discount_type, 'eligibleWinBackOfferIds', r.eligible_win_back_offer_ids)
                ORDER BY x.environment, x.original_transaction_id)
                FROM subscriptions x
                LEFT JOIN renewal_infos r ON r.environment = x.environment AND r.bundle_id = x.bundle_id
                                         AND r.original_transaction_id = x.original_transaction_id
                WHERE x.bundle_id = $1 AND ($3 OR x.environment = $4) AND x.original_transaction_id = ANY(ARRAY(SELECT original_transaction_id FROM o))
                  AND EXISTS (SELECT 1 FROM o WHERE o.original_transaction_id = x.original_transaction_id
                                                  AND (o.environment IS NULL OR o.environment = x.environment))), '[]')::text,
            COALESCE((SELECT json_agg(json_build_object(
                'environment', environment, 'transactionId', transaction_id, 'originalTransactionId', original_transaction_id,
                'productId', product_id, 'productType', product_type, 'purchaseDate', purchase_date, 'revocationDate', revocation_date,
                'quantity', quantity)
                ORDER BY environment, purchase_date, transaction_id)
                FROM transactions x
                WHERE bundle_id = $1 AND ($3 OR environment = $4)
                  AND product_type IS DISTINCT FROM 'Auto-Renewable Subscription'
                  AND original_transaction_id = ANY(ARRAY(SELECT original_transaction_id FROM o))
                  AND EXISTS (SELECT 1 FROM o WHERE o.original_transaction_id = x.original_transaction_id
                                                  AND (o.environment IS NULL OR o.environment = x.environment))),
                '[]')::text
        """

    var bundleId: String
    var customer: String
    var kind: CustomerIDKind
    /// nil: every environment.
    var environment: String?
    var asOf: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(self.bundleId)
        bindings.append(self.customer)
        bindings.append(self.environment == nil)
        bindings.append(self.environment ?? "")
        bindings.append(self.asOf)
        bindings.append(self.kind.rawValue)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> CustomerViewJSON {
        let (entitlements, subscriptions, purchases) = try row.decode((String, String, String).self)
        return CustomerViewJSON(entitlements: entitlements, subscriptions: subscriptions, purchases: purchases)
    }
}
