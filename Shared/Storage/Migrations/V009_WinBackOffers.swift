import Logging
import PostgresNIO

/// Version 9: the win-back offers Apple lists in a subscription's newest renewal info (`eligibleWinBackOfferIds`,
/// a JSON array), so customer-api can say which win-back offers a lapsed customer may be shown.
struct WinBackOffersMigration: SQLStatementsMigration {
    let version = 9
    let name = "win-back offers of renewal infos"

    static let statements = [
        "ALTER TABLE renewal_infos ADD COLUMN eligible_win_back_offer_ids jsonb"
    ]
}
