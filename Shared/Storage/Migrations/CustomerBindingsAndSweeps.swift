import Logging
import PostgresNIO

/// Version 5: which app user each purchase belongs to (bound when the app posts a purchase to customer-api,
/// written by the entitlement-updater only), and which expiries the renewal-time sweeper already asked the
/// App Store about (so each lapsed expiry is asked once).
struct CustomerBindingsAndSweeps: SQLStatementsMigration {
    let version = 5
    let name = "customer_bindings and renewal_sweeps"

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
        """
        CREATE TABLE renewal_sweeps (
            environment text NOT NULL,
            bundle_id text NOT NULL,
            original_transaction_id text NOT NULL,
            valid_until bigint NOT NULL,
            request_id text NOT NULL,
            asked_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (environment, bundle_id, original_transaction_id, valid_until)
        )
        """,
        "CREATE INDEX entitlements_lapsed ON entitlements (valid_until) WHERE active AND revoked_at IS NULL",
    ]
}
