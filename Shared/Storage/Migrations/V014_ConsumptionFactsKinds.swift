import Logging
import PostgresNIO

/// Version 14: consumption facts name the kind of id they are about (`customer_kind`: `appUserId`,
/// `appAccountToken` or `originalTransactionId`, as look-ups do), so facts recorded for app user "X" never answer for
/// a purchase whose token or originalTransactionId happens to be "X". Rows recorded before get the kind their id
/// has: an app user with a binding, else a token's shape, else an originalTransactionId's digits, else an app user.
struct ConsumptionFactsKindsMigration: SQLStatementsMigration {
    let version = 14
    let name = "consumption facts name their kind of id"

    static let statements = [
        "ALTER TABLE consumption_facts ADD COLUMN customer_kind text NOT NULL DEFAULT 'appUserId'",
        """
        UPDATE consumption_facts f SET customer_kind = CASE
            WHEN EXISTS (SELECT 1 FROM customer_bindings b WHERE b.environment = f.environment AND b.bundle_id = f.bundle_id
                                                              AND b.app_user_id = f.customer) THEN 'appUserId'
            WHEN f.customer ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN 'appAccountToken'
            WHEN f.customer ~ '^[0-9]+$' THEN 'originalTransactionId'
            ELSE 'appUserId' END
        """,
        "ALTER TABLE consumption_facts DROP CONSTRAINT consumption_facts_pkey",
        "ALTER TABLE consumption_facts ADD PRIMARY KEY (environment, bundle_id, customer_kind, customer, transaction_id)",
    ]
}
