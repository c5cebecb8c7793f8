import Logging
import PostgresNIO

/// Version 4: the secret API keys app teams call `customer-api` with, one app each, stored as the SHA-256 of
/// their secret (the secret itself is shown once, when the key is created or rotated); and the indexes its
/// look-ups use (a customer by appAccountToken or originalTransactionId within an app, any environment).
struct CustomerAPIKeys: SQLStatementsMigration {
    let version = 4
    let name = "api_keys and look-up indexes for customer-api"

    static let statements = [
        """
        CREATE TABLE api_keys (
            key_id text PRIMARY KEY,
            bundle_id text NOT NULL,
            label text NOT NULL DEFAULT '',
            secret_sha256 bytea NOT NULL,
            rate_per_second integer NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz,
            revoked_at timestamptz,
            replaced_by text
        )
        """,
        "CREATE INDEX api_keys_bundle ON api_keys (bundle_id)",
        "CREATE INDEX entitlements_app_customer ON entitlements (bundle_id, customer)",
        "CREATE INDEX entitlements_app_original ON entitlements (bundle_id, original_transaction_id)",
        "CREATE INDEX subscriptions_app_customer ON subscriptions (bundle_id, customer)",
        "CREATE INDEX subscriptions_app_original ON subscriptions (bundle_id, original_transaction_id)",
        "CREATE INDEX transactions_app_token ON transactions (bundle_id, lower(app_account_token))",
        "CREATE INDEX transactions_app_original ON transactions (bundle_id, original_transaction_id)",
    ]
}
