import Logging
import PostgresNIO

/// Version 10: subscriptions the App Store migrated to another original transaction (a `MIGRATION` to the Advanced
/// Commerce API: the new subscription's transactions carry `previousOriginalTransactionId`). One row per previous
/// subscription: written when the entitlement-updater first applies a notification of the new one, it moves the
/// previous subscription's customer once, and keeps the previous subscription's later notifications from moving
/// state (they are stored and published, as stale ones are).
struct SubscriptionMigrationsMigration: SQLStatementsMigration {
    let version = 10
    let name = "subscription_migrations"

    static let statements = [
        """
        CREATE TABLE subscription_migrations (
            environment text NOT NULL,
            bundle_id text NOT NULL,
            previous_original_transaction_id text NOT NULL,
            original_transaction_id text NOT NULL,
            customer text,
            notification_uuid text NOT NULL,
            signed_date bigint NOT NULL,
            migrated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (environment, bundle_id, previous_original_transaction_id)
        )
        """,
        "CREATE INDEX subscription_migrations_target ON subscription_migrations (environment, bundle_id, original_transaction_id)",
    ]
}
