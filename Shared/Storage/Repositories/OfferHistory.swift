import Foundation
public import Logging
public import PostgresNIO

/// What a customer's stored history says about offers for one product of a subscription group (the catalog's):
/// whether the customer has subscribed in that group and had an introductory
/// offer there, a transaction id of theirs to bind a signature to, and the win-back offers Apple listed in the newest
/// renewal info of their subscriptions in the group. Read-only: customer-api decides, the updater stays the writer.
public struct OfferHistory: Codable, Hashable, Sendable {
    /// The product's subscription group, as the catalog names it.
    public var subscriptionGroupIdentifier: String?
    /// The customer has a transaction of a product of the group (or one naming the group).
    public var subscribedInGroup: Bool
    /// The customer has had an introductory offer (offerType 1) in the group.
    public var hadIntroductoryOffer: Bool
    /// The customer's newest transaction id in the app and environment (nil: no purchase stored).
    public var newestTransactionId: String?
    /// The app account token of the customer's purchases, when they carry one.
    public var appAccountToken: String?
    /// Win-back offers Apple lists for the customer's subscriptions in the group (sorted, distinct).
    public var eligibleWinBackOfferIds: [String]

    /// Apple's rule as StoreKit applies it: an introductory offer is for customers new to the subscription group.
    public var eligibleForIntroductoryOffer: Bool { !self.subscribedInGroup && !self.hadIntroductoryOffer }
}

/// Reads ``OfferHistory`` for an app user (the purchases bound to them) in one statement.
public struct OfferHistoryLookup: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The history of `appUserId` in one app and environment, for the subscription group `groupId` whose products are
    /// `groupProducts` (the catalog's).
    public func history(
        bundleId: String, environment: String, appUserId: String, groupId: String, groupProducts: [String]
    ) async throws -> OfferHistory {
        let statement = OfferHistoryStatement(
            bundleId: bundleId, environment: environment, appUserId: appUserId, groupId: groupId,
            groupProducts: groupProducts)
        var history = OfferHistory(
            subscribedInGroup: false, hadIntroductoryOffer: false, eligibleWinBackOfferIds: [])
        for try await row in try await self.client.execute(statement, logger: self.logger) { history = row }
        return history
    }
}

/// The history as a prepared statement: the customer's purchases (`o`) through `customer_bindings`, every table then
/// read through its (environment, bundle_id, …) index.
struct OfferHistoryStatement: PostgresPreparedStatement {
    typealias Row = OfferHistory

    static let sql = """
        WITH o AS (
            SELECT original_transaction_id FROM customer_bindings
            WHERE bundle_id = $1 AND environment = $2 AND app_user_id = $3
        ), mine AS (
            SELECT t.transaction_id, t.product_id, t.subscription_group_identifier, t.offer_type, t.purchase_date,
                   t.app_account_token, t.original_transaction_id,
                   (t.product_id = ANY($5::text[]) OR t.subscription_group_identifier = $4) AS in_group
            FROM transactions t
            WHERE t.bundle_id = $1 AND t.environment = $2
              AND t.original_transaction_id = ANY(ARRAY(SELECT original_transaction_id FROM o))
        )
        SELECT
            $4::text,
            EXISTS (SELECT 1 FROM mine WHERE in_group),
            EXISTS (SELECT 1 FROM mine WHERE in_group AND offer_type = 1),
            (SELECT transaction_id FROM mine ORDER BY purchase_date DESC NULLS LAST, transaction_id DESC LIMIT 1),
            (SELECT app_account_token FROM mine WHERE app_account_token IS NOT NULL LIMIT 1),
            COALESCE((SELECT json_agg(DISTINCT offer ORDER BY offer)
                      FROM renewal_infos r, jsonb_array_elements_text(r.eligible_win_back_offer_ids) AS offer
                      WHERE r.bundle_id = $1 AND r.environment = $2
                        AND r.original_transaction_id IN (SELECT original_transaction_id FROM mine WHERE in_group)), '[]')::text
        """

    var bundleId: String
    var environment: String
    var appUserId: String
    var groupId: String
    var groupProducts: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(self.bundleId)
        bindings.append(self.environment)
        bindings.append(self.appUserId)
        bindings.append(self.groupId)
        bindings.append(self.groupProducts)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> OfferHistory {
        let (group, subscribed, hadIntro, newest, token, winBack) = try row.decode(
            (String?, Bool, Bool, String?, String?, String).self)
        let offers = (try? JSONDecoder().decode([String].self, from: Data(winBack.utf8))) ?? []
        return OfferHistory(
            subscriptionGroupIdentifier: group, subscribedInGroup: subscribed, hadIntroductoryOffer: hadIntro,
            newestTransactionId: newest, appAccountToken: token, eligibleWinBackOfferIds: offers)
    }
}
