import Logging
import PostgresNIO

/// Version 6: the support side. How often each notification was delivered again (duplicates), consumption requests (one row per transaction, environment and app, with the
/// facts and the answer, its deadline and what became of it), the optional facts the app team fills for them
/// (consent above all), the role of an API key (`app` or `admin`: the support routes and console), and the DLQ
/// as rows (recorded by the updater from the rejected topic) so the console shows each customer's rejections
/// with their reason and can replay them.
struct SupportMigration: SQLStatementsMigration {
    let version = 6
    let name = "consumption_requests, consumption_facts, api key roles, dead_letters"

    static let statements = [
        """
        CREATE TABLE consumption_requests (
            environment text NOT NULL,
            bundle_id text NOT NULL,
            transaction_id text NOT NULL,
            original_transaction_id text NOT NULL,
            customer text NOT NULL,
            reason text,
            notification_uuid text NOT NULL,
            requested_at bigint NOT NULL,
            deadline bigint NOT NULL,
            times_requested integer NOT NULL DEFAULT 1,
            status text NOT NULL,
            api_version text,
            facts jsonb,
            answer jsonb,
            attempts integer NOT NULL DEFAULT 0,
            answered_at bigint,
            detail text,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (environment, bundle_id, transaction_id)
        )
        """,
        "CREATE INDEX consumption_requests_pending ON consumption_requests (deadline) WHERE status = 'pending'",
        "CREATE INDEX consumption_requests_customer ON consumption_requests (bundle_id, customer)",
        """
        CREATE TABLE consumption_facts (
            environment text NOT NULL,
            bundle_id text NOT NULL,
            customer text NOT NULL,
            transaction_id text NOT NULL DEFAULT '',
            customer_consented boolean NOT NULL,
            play_time_minutes bigint,
            delivery_status text,
            consumption_percentage integer,
            user_status integer,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (environment, bundle_id, customer, transaction_id)
        )
        """,
        "ALTER TABLE api_keys ADD COLUMN role text NOT NULL DEFAULT 'app'",
        "ALTER TABLE notification_log ADD COLUMN duplicates integer NOT NULL DEFAULT 0",
        """
        CREATE TABLE dead_letters (
            topic text NOT NULL,
            partition integer NOT NULL,
            "offset" bigint NOT NULL,
            subject text,
            environment text,
            bundle_id text,
            reason text NOT NULL,
            detail text,
            notification_uuid text,
            record jsonb NOT NULL,
            recorded_at timestamptz NOT NULL DEFAULT now(),
            replayed_at timestamptz,
            PRIMARY KEY (topic, partition, "offset")
        )
        """,
        "CREATE INDEX dead_letters_subject ON dead_letters (subject)",
    ]
}
