import Logging
import PostgresNIO

/// Version 1: the notification log, transactions, subscriptions, entitlements, the outbox and status
/// requests, with the indexes the services and `iapctl entitlements` use. Dates are epoch milliseconds
/// (`bigint`), exactly as Apple signs them; bookkeeping times are `timestamptz`.
struct InitialSchema: SQLStatementsMigration {
    let version = 1
    let name = "initial schema"

    static let statements = [
        """
        CREATE TABLE notification_log (
            notification_uuid text PRIMARY KEY,
            notification_type text NOT NULL,
            subtype text,
            subject text NOT NULL,
            environment text NOT NULL,
            signed_date bigint NOT NULL,
            received_at bigint,
            applied_at timestamptz NOT NULL DEFAULT now(),
            outcome text NOT NULL,
            detail text
        )
        """,
        "CREATE INDEX notification_log_subject ON notification_log (subject, signed_date)",
        """
        CREATE TABLE transactions (
            transaction_id text PRIMARY KEY,
            original_transaction_id text NOT NULL,
            web_order_line_item_id text,
            bundle_id text NOT NULL,
            product_id text NOT NULL,
            product_type text,
            subscription_group_identifier text,
            environment text NOT NULL,
            app_account_token text,
            ownership_type text,
            purchase_date bigint,
            original_purchase_date bigint,
            expires_date bigint,
            quantity integer,
            transaction_reason text,
            is_upgraded boolean NOT NULL DEFAULT false,
            offer_type integer,
            offer_identifier text,
            price bigint,
            currency text,
            storefront text,
            revocation_date bigint,
            revocation_reason integer,
            revocation_type text,
            revocation_percentage integer,
            signed_date bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        "CREATE INDEX transactions_original ON transactions (original_transaction_id)",
        """
        CREATE TABLE subscriptions (
            original_transaction_id text PRIMARY KEY,
            customer text NOT NULL,
            product_id text NOT NULL,
            subscription_group_identifier text,
            environment text NOT NULL,
            status integer,
            auto_renew_status integer,
            auto_renew_product_id text,
            expires_date bigint,
            grace_period_expires_date bigint,
            is_in_billing_retry boolean,
            price_increase_status integer,
            expiration_intent integer,
            last_signed_date bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        "CREATE INDEX subscriptions_customer ON subscriptions (customer)",
        """
        CREATE TABLE entitlements (
            customer text NOT NULL,
            product_id text NOT NULL,
            active boolean NOT NULL,
            original_transaction_id text NOT NULL,
            source_transaction_id text NOT NULL,
            ownership_type text NOT NULL,
            valid_from bigint,
            valid_until bigint,
            revoked_at bigint,
            revocation_reason integer,
            revocation_type text,
            last_signed_date bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (customer, product_id)
        )
        """,
        "CREATE INDEX entitlements_original ON entitlements (original_transaction_id)",
        """
        CREATE TABLE outbox (
            id bigserial PRIMARY KEY,
            event_id text NOT NULL UNIQUE,
            topic text NOT NULL,
            key text NOT NULL,
            payload jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            published_at timestamptz
        )
        """,
        "CREATE INDEX outbox_unpublished ON outbox (id) WHERE published_at IS NULL",
        """
        CREATE TABLE status_requests (
            id bigserial PRIMARY KEY,
            request_id text NOT NULL UNIQUE,
            original_transaction_id text NOT NULL,
            environment text NOT NULL,
            reason text NOT NULL,
            notification_uuid text,
            created_at timestamptz NOT NULL DEFAULT now(),
            published_at timestamptz
        )
        """,
        "CREATE INDEX status_requests_unpublished ON status_requests (id) WHERE published_at IS NULL",
    ]
}
