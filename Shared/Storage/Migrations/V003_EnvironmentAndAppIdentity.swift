import Logging
import PostgresNIO

/// Version 3: the environment and the app belong to every identity, so Sandbox never touches Production
/// and two apps never share a row; every verified renewal info is kept in its own table; entitlements name
/// the entitlement their product grants.
///
/// Existing rows are carried over: a row's app and environment come from its transactions (the only place
/// version 1 stored the bundle id), app-level log rows from their `bundleId:id` subject.
struct EnvironmentAndAppIdentity: SQLStatementsMigration {
    let version = 3
    let name = "environment and app in every identity; renewal_infos; entitlement ids"

    static let statements = [
        // The notification log: the app beside the environment; the stale guard looks subjects up per both.
        "ALTER TABLE notification_log ADD COLUMN bundle_id text NOT NULL DEFAULT ''",
        """
        UPDATE notification_log l SET bundle_id = t.bundle_id
        FROM (SELECT DISTINCT ON (original_transaction_id) original_transaction_id, bundle_id FROM transactions) t
        WHERE t.original_transaction_id = l.subject
        """,
        "UPDATE notification_log SET bundle_id = split_part(subject, ':', 1) WHERE bundle_id = '' AND position(':' in subject) > 0",
        "DROP INDEX notification_log_subject",
        "DROP INDEX notification_log_subject_advancing",
        "CREATE INDEX notification_log_subject ON notification_log (environment, bundle_id, subject, signed_date)",
        """
        CREATE INDEX notification_log_subject_advancing ON notification_log (environment, bundle_id, subject, signed_date)
        WHERE advances_subject
        """,
        // Transactions: one row per (environment, app, transaction id); more of what Apple signs.
        "ALTER TABLE transactions DROP CONSTRAINT transactions_pkey",
        "ALTER TABLE transactions ADD PRIMARY KEY (environment, bundle_id, transaction_id)",
        "DROP INDEX transactions_original",
        "CREATE INDEX transactions_original ON transactions (environment, bundle_id, original_transaction_id)",
        """
        ALTER TABLE transactions ADD COLUMN storefront_id text, ADD COLUMN offer_discount_type text, ADD COLUMN offer_period text,
            ADD COLUMN app_transaction_id text
        """,
        // Subscriptions: keyed per environment and app.
        "ALTER TABLE subscriptions ADD COLUMN bundle_id text NOT NULL DEFAULT ''",
        """
        UPDATE subscriptions s SET bundle_id = t.bundle_id
        FROM (SELECT DISTINCT ON (environment, original_transaction_id) environment, original_transaction_id, bundle_id FROM transactions) t
        WHERE t.original_transaction_id = s.original_transaction_id AND t.environment = s.environment
        """,
        "ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_pkey",
        "ALTER TABLE subscriptions ADD PRIMARY KEY (environment, bundle_id, original_transaction_id)",
        "DROP INDEX subscriptions_customer",
        "CREATE INDEX subscriptions_customer ON subscriptions (environment, bundle_id, customer)",
        // Renewal info: the newest signed version per subscription.
        """
        CREATE TABLE renewal_infos (
            environment text NOT NULL,
            bundle_id text NOT NULL,
            original_transaction_id text NOT NULL,
            product_id text,
            auto_renew_product_id text,
            auto_renew_status integer,
            expiration_intent integer,
            is_in_billing_retry boolean,
            grace_period_expires_date bigint,
            price_increase_status integer,
            offer_type integer,
            offer_identifier text,
            offer_discount_type text,
            renewal_date bigint,
            renewal_price bigint,
            currency text,
            recent_subscription_start_date bigint,
            app_account_token text,
            app_transaction_id text,
            signed_date bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (environment, bundle_id, original_transaction_id)
        )
        """,
        // Entitlements: keyed per environment, app, customer and product; the entitlement the product grants.
        "ALTER TABLE entitlements ADD COLUMN environment text NOT NULL DEFAULT '', ADD COLUMN bundle_id text NOT NULL DEFAULT ''",
        "ALTER TABLE entitlements ADD COLUMN entitlement_id text",
        """
        UPDATE entitlements e SET environment = t.environment, bundle_id = t.bundle_id
        FROM transactions t WHERE t.transaction_id = e.source_transaction_id
        """,
        """
        UPDATE entitlements e SET environment = t.environment, bundle_id = t.bundle_id
        FROM (SELECT DISTINCT ON (original_transaction_id) original_transaction_id, environment, bundle_id FROM transactions) t
        WHERE e.bundle_id = '' AND t.original_transaction_id = e.original_transaction_id
        """,
        "UPDATE entitlements SET entitlement_id = product_id",
        "ALTER TABLE entitlements ALTER COLUMN entitlement_id SET NOT NULL",
        "ALTER TABLE entitlements DROP CONSTRAINT entitlements_pkey",
        "ALTER TABLE entitlements ADD PRIMARY KEY (environment, bundle_id, customer, product_id)",
        "DROP INDEX entitlements_original",
        "CREATE INDEX entitlements_original ON entitlements (environment, bundle_id, original_transaction_id)",
        // Status requests and the outbox name their environment and app too.
        "ALTER TABLE status_requests ADD COLUMN bundle_id text NOT NULL DEFAULT ''",
        """
        UPDATE status_requests r SET bundle_id = t.bundle_id
        FROM (SELECT DISTINCT ON (environment, original_transaction_id) environment, original_transaction_id, bundle_id FROM transactions) t
        WHERE t.original_transaction_id = r.original_transaction_id AND t.environment = r.environment
        """,
        "ALTER TABLE outbox ADD COLUMN environment text NOT NULL DEFAULT '', ADD COLUMN bundle_id text NOT NULL DEFAULT ''",
        """
        UPDATE outbox o SET environment = t.environment, bundle_id = t.bundle_id
        FROM (SELECT DISTINCT ON (original_transaction_id) original_transaction_id, environment, bundle_id FROM transactions) t
        WHERE o.published_at IS NULL AND t.original_transaction_id = o.payload->>'subject'
        """,
    ]
}
