import Logging
import PostgresNIO

/// Version 17: webhooks. `webhook_endpoints` are the URLs registered per app and environment (event-type filter, rate
/// and concurrency, and when and why the dispatcher disabled one); `webhook_secrets` their signing secrets (several at
/// once during a rotation, the old one with an expiry); `webhook_deliveries` one row per event and endpoint, the
/// dispatcher's durable backlog (pending until a 2xx, in `id` order per endpoint and subject); `webhook_attempts` the
/// delivery log (every attempt's status, latency and response snippet).
struct WebhooksMigration: SQLStatementsMigration {
    let version = 17
    let name = "webhooks"

    static let statements = [
        """
        CREATE TABLE webhook_endpoints (
            id text PRIMARY KEY,
            environment text NOT NULL,
            bundle_id text NOT NULL,
            url text NOT NULL,
            event_types text[] NOT NULL DEFAULT '{}',
            rate_per_second integer NOT NULL CHECK (rate_per_second > 0),
            concurrency integer NOT NULL CHECK (concurrency > 0),
            created_at timestamptz NOT NULL DEFAULT now(),
            disabled_at timestamptz,
            disabled_reason text
        )
        """,
        "CREATE INDEX webhook_endpoints_app ON webhook_endpoints (environment, bundle_id)",
        """
        CREATE TABLE webhook_secrets (
            id text PRIMARY KEY,
            endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
            secret text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz
        )
        """,
        "CREATE INDEX webhook_secrets_endpoint ON webhook_secrets (endpoint_id)",
        """
        CREATE TABLE webhook_deliveries (
            id bigserial PRIMARY KEY,
            endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
            event_id text NOT NULL,
            event_type text NOT NULL,
            subject text NOT NULL,
            sequence bigint,
            payload text NOT NULL,
            published_at timestamptz NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered')),
            attempts integer NOT NULL DEFAULT 0,
            first_failure_at timestamptz,
            next_attempt_at timestamptz NOT NULL DEFAULT now(),
            leased_until timestamptz,
            delivered_at timestamptz,
            UNIQUE (endpoint_id, event_id)
        )
        """,
        """
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, id)
            WHERE state = 'pending'
        """,
        """
        CREATE INDEX webhook_deliveries_subject ON webhook_deliveries (endpoint_id, subject, id)
            WHERE state = 'pending'
        """,
        "CREATE INDEX webhook_deliveries_created ON webhook_deliveries (endpoint_id, created_at)",
        "CREATE INDEX webhook_deliveries_sequence ON webhook_deliveries (endpoint_id, subject, sequence)",
        """
        CREATE TABLE webhook_attempts (
            delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
            attempted_at timestamptz NOT NULL,
            status integer,
            latency_ms integer NOT NULL,
            error text,
            response text
        )
        """,
        "CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempted_at)",
    ]
}
