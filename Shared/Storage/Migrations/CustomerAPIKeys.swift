import Logging
import PostgresNIO

/// Version 4: the secret API keys app teams call `customer-api` with, one app each, stored as the SHA-256 of
/// their secret (the secret itself is shown once, when the key is created or rotated).
struct CustomerAPIKeys: SQLStatementsMigration {
    let version = 4
    let name = "api_keys for customer-api"

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
    ]
}
