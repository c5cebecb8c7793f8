import Logging
import PostgresNIO

/// Version 7: who owns a purchase. `account_token_owners` holds the app team's declarations of which app user an
/// appAccountToken belongs to (first declaration wins; customer-api writes them, like its keys), and a binding
/// records the proof a transfer was made on (`device`, or `admin:NAME`).
struct PurchaseOwnershipMigration: SQLStatementsMigration {
    let version = 7
    let name = "account_token_owners; transfer proof of bindings"

    static let statements = [
        """
        CREATE TABLE account_token_owners (
            environment text NOT NULL,
            bundle_id text NOT NULL,
            app_account_token text NOT NULL CHECK (app_account_token = lower(app_account_token)),
            app_user_id text NOT NULL,
            declared_by_key text NOT NULL,
            declared_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (environment, bundle_id, app_account_token)
        )
        """,
        "CREATE INDEX account_token_owners_user ON account_token_owners (bundle_id, app_user_id)",
        "ALTER TABLE customer_bindings ADD COLUMN transfer_proof text",
    ]
}
