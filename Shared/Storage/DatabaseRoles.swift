import Foundation
public import Logging
public import PostgresNIO

/// A PostgreSQL role per service with only the privileges it needs (least privilege): the migrations' owner keeps
/// the schema; the entitlement-updater writes the entitlement tables (and numbers each subject's events); customer-api
/// reads them, and the published outbox for the event feed, and writes only its token declarations and DLQ replay
/// marks; the event-publisher reads the outbox and appends its publications (its
/// cursor); retention-messaging reads transactions and subscriptions and keeps the answers it gave Apple's real-time
/// requests (its replicas share them, so a replay is answered once whichever replica it reaches); the
/// webhook-dispatcher keeps its backlog of deliveries and their log, and reads the endpoints and their secrets. Ingest,
/// the chain-verifier and the refund-resolver use no database at all. `iapctl migrate --roles` creates or updates
/// the roles (LOGIN, with the passwords it is given) and grants exactly these privileges after the migrations, so
/// a new table is granted by the release that adds it. Each role may read `schema_migrations`, so a pod can wait for
/// the schema its build needs (`iapctl migrate --check`) without being able to change it.
public enum DatabaseRoles {
    /// A service that connects to PostgreSQL.
    public enum Service: String, CaseIterable, Sendable {
        case entitlementUpdater = "entitlement-updater"
        case customerAPI = "customer-api"
        case eventPublisher = "event-publisher"
        case retentionMessaging = "retention-messaging"
        case webhookDispatcher = "webhook-dispatcher"

        /// The role's name (`iap_entitlement_updater`, …).
        public var role: String { "iap_" + self.rawValue.replacingOccurrences(of: "-", with: "_") }

        /// The environment variable `iapctl migrate --roles` reads the role's password from.
        public var passwordVariable: String {
            switch self {
            case .entitlementUpdater: "ROLE_PASSWORD_ENTITLEMENT_UPDATER"
            case .customerAPI: "ROLE_PASSWORD_CUSTOMER_API"
            case .eventPublisher: "ROLE_PASSWORD_EVENT_PUBLISHER"
            case .retentionMessaging: "ROLE_PASSWORD_RETENTION_MESSAGING"
            case .webhookDispatcher: "ROLE_PASSWORD_WEBHOOK_DISPATCHER"
            }
        }

        /// The role's privileges: (privileges, table). Column lists limit an UPDATE to those columns.
        public var grants: [(String, String)] {
            switch self {
            case .entitlementUpdater:
                [
                    "notification_log", "transactions", "renewal_infos", "subscriptions", "entitlements", "outbox",
                    "status_requests",
                    "customer_bindings", "consumption_requests", "consumption_facts", "dead_letters",
                    "subscription_migrations", "event_sequences",
                ].map { ("SELECT, INSERT, UPDATE, DELETE", $0) }
                    + [
                        ("SELECT", "account_token_owners"), ("SELECT", "schema_migrations"),
                        // Pruning: publications past their window, and what is still pending.
                        ("SELECT, DELETE", "outbox_publications"), ("SELECT", "outbox_pending"),
                    ]
            case .customerAPI:
                [
                    "notification_log", "transactions", "renewal_infos", "subscriptions", "entitlements",
                    "customer_bindings", "api_keys",
                    "consumption_requests", "consumption_facts", "dead_letters", "account_token_owners",
                    "subscription_migrations",
                ].map { ("SELECT", $0) }
                    + [
                        ("INSERT", "account_token_owners"), ("UPDATE (replayed_at)", "dead_letters"),
                        ("SELECT", "schema_migrations"),
                        // The event feed: the outbox up to the relay's cursor.
                        ("SELECT", "outbox"), ("SELECT", "outbox_publications"),
                        // Webhook administration: endpoints registered and re-enabled, secrets added (never read
                        // back: only their ids and expiries), the delivery log read and deliveries queued again.
                        ("SELECT, INSERT, UPDATE (disabled_at, disabled_reason)", "webhook_endpoints"),
                        (
                            "INSERT, SELECT (id, endpoint_id, created_at, expires_at), UPDATE (expires_at)",
                            "webhook_secrets"
                        ),
                        (
                            "SELECT, UPDATE (state, next_attempt_at, first_failure_at, leased_until)",
                            "webhook_deliveries"
                        ),
                        ("SELECT", "webhook_attempts"),
                    ]
            case .eventPublisher:
                [
                    ("SELECT", "outbox"), ("SELECT", "outbox_pending"), ("SELECT, INSERT", "outbox_publications"),
                    ("SELECT", "schema_migrations"),
                ]
            case .retentionMessaging:
                [
                    ("SELECT", "transactions"), ("SELECT", "subscriptions"), ("SELECT", "schema_migrations"),
                    // Its replicas' shared memory of the real-time requests answered (no entitlement state).
                    ("SELECT, INSERT, UPDATE (answer), DELETE", "realtime_answers"),
                ]
            case .webhookDispatcher:
                [
                    ("SELECT, UPDATE (disabled_at, disabled_reason)", "webhook_endpoints"),
                    ("SELECT", "webhook_secrets"), ("SELECT, INSERT, UPDATE, DELETE", "webhook_deliveries"),
                    ("SELECT, INSERT, DELETE", "webhook_attempts"), ("SELECT", "schema_migrations"),
                ]
            }
        }

        /// Whether the role uses the tables' sequences (it inserts rows with generated ids).
        var usesSequences: Bool { self == .entitlementUpdater }

        /// The one sequence a role that does not use them all draws ids from.
        var ownSequence: String? { self == .webhookDispatcher ? "webhook_deliveries_id_seq" : nil }
    }

    /// Creates or updates the role of each service in `passwords` and grants exactly its privileges (revoking
    /// whatever else it had on the schema's tables). Run by the schema's owner, after the migrations. Each password
    /// reaches the server only as its SCRAM-SHA-256 verifier (``ScramVerifier``), so no statement or log holds it;
    /// and CREATE on schema public is revoked from PUBLIC (PostgreSQL before 15 grants it), so no role but the
    /// owner can add objects beside the pipeline's.
    public static func apply(passwords: [Service: String], client: PostgresClient, logger: Logger) async throws {
        var verifiers: [Service: String] = [:]
        for (service, password) in passwords {
            do {
                verifiers[service] = try ScramVerifier.make(password: password)
            } catch {
                throw StorageError("\(service.passwordVariable): \(error)")
            }
        }
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("REVOKE CREATE ON SCHEMA public FROM PUBLIC", logger: logger)
            for (service, verifier) in verifiers.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                let role = service.role
                var statements: [String] = []
                // Utility statements take no bound parameters: PostgreSQL quotes the name and the verifier itself
                // (format's %I and %L), from values bound as parameters.
                let exists =
                    try await connection.query("SELECT 1 FROM pg_roles WHERE rolname = \(role)", logger: logger)
                    .collect().count > 0
                statements.append(
                    try await Self.formatted(
                        exists ? "ALTER ROLE %I LOGIN PASSWORD %L" : "CREATE ROLE %I LOGIN PASSWORD %L", role, verifier,
                        on: connection, logger: logger))
                statements.append(
                    try await Self.formatted(
                        "GRANT CONNECT ON DATABASE %I TO %I", nil, role, database: true, on: connection, logger: logger)
                )
                statements.append(
                    try await Self.formatted(
                        "GRANT USAGE ON SCHEMA public TO %I", role, nil, on: connection, logger: logger))
                statements.append(
                    try await Self.formatted(
                        "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM %I", role, nil, on: connection, logger: logger))
                statements.append(
                    try await Self.formatted(
                        "REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM %I", role, nil, on: connection,
                        logger: logger))
                for (privileges, table) in service.grants {
                    statements.append(
                        try await Self.formatted(
                            "GRANT \(privileges) ON %I TO %I", table, role, on: connection, logger: logger))
                }
                if let sequence = service.ownSequence {
                    statements.append(
                        try await Self.formatted(
                            "GRANT USAGE, SELECT ON SEQUENCE %I TO %I", sequence, role, on: connection, logger: logger))
                }
                if service.usesSequences {
                    statements.append(
                        try await Self.formatted(
                            "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO %I", role, nil,
                            on: connection, logger: logger))
                }
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                logger.info("role granted", metadata: ["role": "\(role)"])
            }
        }
    }

    /// A statement built by PostgreSQL's `format` from bound values (`%I` quotes identifiers, `%L` literals); with
    /// `database`, the first `%I` is the current database.
    private static func formatted(
        _ template: String, _ first: String?, _ second: String?, database: Bool = false,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> String {
        let query: PostgresQuery
        if database {
            query = "SELECT format(\(template), current_database(), \(second ?? ""))"
        } else if let second {
            query = "SELECT format(\(template), \(first ?? ""), \(second))"
        } else {
            query = "SELECT format(\(template), \(first ?? ""))"
        }
        for try await text in try await connection.query(query, logger: logger).decode(String.self) { return text }
        throw StorageError("format returned nothing for \(template)")
    }
}
