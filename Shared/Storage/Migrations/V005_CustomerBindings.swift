import Logging
import PostgresNIO

/// Version 5: which app user each purchase belongs to (bound when the app posts a purchase to customer-api,
/// written by the entitlement-updater only), and the index the renewal-time sweeper finds lapsed active
/// entitlements with.
struct CustomerBindingsMigration: SQLStatementsMigration {
    let version = 5
    let name = "customer_bindings; index of lapsed active entitlements"

    static let statements = [
        """
        CREATE TABLE customer_bindings (
            environment text NOT NULL,
            bundle_id text NOT NULL,
            original_transaction_id text NOT NULL,
            app_user_id text NOT NULL,
            previous_app_user_id text,
            source text NOT NULL,
            bound_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (environment, bundle_id, original_transaction_id)
        )
        """,
        "CREATE INDEX customer_bindings_user ON customer_bindings (bundle_id, app_user_id)",
        "CREATE INDEX entitlements_lapsed ON entitlements (valid_until) WHERE active AND revoked_at IS NULL",
    ]
}
