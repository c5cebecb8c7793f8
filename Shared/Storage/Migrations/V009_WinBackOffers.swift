import Logging
import PostgresNIO

/// Version 9: the win-back offers Apple lists in a subscription's newest renewal info (`eligibleWinBackOfferIds`,
/// a JSON array), so customer-api can say which win-back offers a lapsed customer may be shown; and an index to find a
/// product's subscription group without reading every transaction (the offer route's look-up).
struct WinBackOffersMigration: SQLStatementsMigration {
    let version = 9
    let name = "win-back offers of renewal infos; transactions by product"

    static let statements = [
        "ALTER TABLE renewal_infos ADD COLUMN eligible_win_back_offer_ids jsonb",
        "CREATE INDEX transactions_product ON transactions (environment, bundle_id, product_id)",
    ]
}
