import AppStoreModels
import EntitlementDecisions
import Entitlements
import Foundation
import Logging
import PostgresNIO

/// The per-subject rows a transaction of the entitlement-updater reads and writes around the rules: the
/// subjects' locks, the log inserts that make a repeat a duplicate (together with the subjects' states, one
/// statement per wave), and the entitlement upsert when it cannot go with the facts.
enum SubjectRows {
    // MARK: Locks

    /// Takes the transaction-scoped lock of every subject of a batch (``NotificationLogEntry/lockKey``), in one statement and in ascending key
    /// order, so two transactions locking overlapping subjects wait for each other instead of deadlocking.
    /// (PostgreSQL evaluates a volatile function of the target list after ORDER BY.)
    static func lock(_ keys: [String], on connection: PostgresConnection, logger: Logger) async throws {
        let locks = try await connection.query(
            """
            SELECT pg_advisory_xact_lock(k)
            FROM (SELECT DISTINCT hashtext(key) AS k FROM unnest(\(keys)::text[]) AS key) AS keys
            ORDER BY k
            """, logger: logger)
        for try await _ in locks {}
    }

    // MARK: Log and state

    /// Logs every entry of a wave (at most one per subject) as pending and, in the same statement, reads each
    /// subject's newest applied signing time, bound app user and entitlement within the entry's environment and
    /// app. Returns one state per entry, nil for an entry already logged (a duplicate, now counted). Each state
    /// is the one before its entry, whose row does not advance the subject yet.
    static func logAndLoadStates(
        _ entries: [NotificationLogEntry], on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [SubjectState?] {
        let input = String(decoding: try FastJSONEncoder().encode(entries), as: UTF8.self)
        let rows = try await connection.execute(LogAndStatesStatement(entries: input), logger: logger)
        // A wave holds each log id once (``Waves``), so a row's id names its entry.
        let indexOfID = Dictionary(entries.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        var states = [SubjectState?](repeating: nil, count: entries.count)
        for try await row in rows {
            // A repeat only counts (the console shows how often Apple delivered it).
            guard row.1, let index = indexOfID[row.0] else { continue }
            var loaded = SubjectState(lastSignedDate: row.2, boundCustomer: row.3, migratedTo: row.16)
            if let customer = row.4, let productId = row.5, let active = row.6, let original = row.7,
                let source = row.8, let ownership = row.9
            {
                loaded.entitlement = EntitlementState(
                    customer: customer, productId: productId, active: active, originalTransactionId: original,
                    sourceTransactionId: source,
                    ownershipType: ownership, validFrom: row.10, validUntil: row.11, revokedAt: row.12,
                    revocationReason: row.13,
                    revocationType: row.14, entitlementId: row.15)
            }
            states[index] = loaded
        }
        return states
    }

    /// The wave's log and state statement, prepared once per connection (parsed once, its plan kept).
    struct LogAndStatesStatement: PostgresPreparedStatement {
        /// An entry's log id, whether it is new, the subject's newest applied signing time, its bound app user, its
        /// newest entitlement row's columns (all nil without one), and the subscription it was migrated to.
        typealias Row = (
            String, Bool, Int64?, String?, String?, String?, Bool?, String?, String?, String?, Int64?, Int64?, Int64?,
            Int32?,
            String?, String?, String?
        )
        /// The entries as a JSON array of ``NotificationLogEntry``.
        var entries: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(self.entries)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            try row.decode(Row.self)
        }

        static let sql = """
            WITH input AS (
                SELECT * FROM json_to_recordset($1::json) AS i(
                    id text, type text, subtype text, subject text, environment text, bundle_id text, signed_date bigint, received_at bigint)
            ), logged AS (
                INSERT INTO notification_log (notification_uuid, notification_type, subtype, subject, environment, bundle_id, signed_date,
                                              received_at, outcome)
                SELECT id, type, subtype, subject, environment, bundle_id, signed_date, received_at, 'pending' FROM input
                ON CONFLICT (notification_uuid) DO UPDATE SET duplicates = notification_log.duplicates + 1
                RETURNING notification_uuid, (xmax = 0) AS is_new
            )
            SELECT input.id, logged.is_new,
                   (SELECT max(signed_date) FROM notification_log
                    WHERE environment = input.environment AND bundle_id = input.bundle_id AND subject = input.subject AND advances_subject),
                   (SELECT app_user_id FROM customer_bindings
                    WHERE environment = input.environment AND bundle_id = input.bundle_id AND original_transaction_id = input.subject),
                   e.customer, e.product_id, e.active, e.original_transaction_id, e.source_transaction_id, e.ownership_type,
                   e.valid_from, e.valid_until, e.revoked_at, e.revocation_reason, e.revocation_type, e.entitlement_id,
                   (SELECT original_transaction_id FROM subscription_migrations
                    WHERE environment = input.environment AND bundle_id = input.bundle_id
                      AND previous_original_transaction_id = input.subject)
            FROM input JOIN logged ON logged.notification_uuid = input.id
            LEFT JOIN LATERAL (
                SELECT * FROM entitlements
                WHERE environment = input.environment AND bundle_id = input.bundle_id AND original_transaction_id = input.subject
                ORDER BY updated_at DESC LIMIT 1) AS e ON true
            """
    }

    // MARK: Entitlement

    /// Writes an entitlement (one row per environment, app, customer and product).
    static func upsert(
        _ e: EntitlementState, entry: NotificationLogEntry, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO entitlements (environment, bundle_id, customer, product_id, entitlement_id, active, original_transaction_id,
                                      source_transaction_id, ownership_type, valid_from, valid_until, revoked_at, revocation_reason,
                                      revocation_type, last_signed_date, updated_at)
            VALUES (\(entry.environment), \(entry.bundleId), \(e.customer), \(e.productId), \(e.entitlementId ?? e.productId), \(e.active),
                    \(e.originalTransactionId), \(e.sourceTransactionId), \(e.ownershipType), \(e.validFrom), \(e.validUntil), \(e.revokedAt),
                    \(e.revocationReason), \(e.revocationType), \(entry.signedDate), clock_timestamp())
            ON CONFLICT (environment, bundle_id, customer, product_id) DO UPDATE SET \(unescaped: Self.entitlementUpdate)
            """, logger: logger)
    }

    /// The columns an entitlement upsert overwrites (shared with the facts statement, which can carry the upsert).
    /// `updated_at` is the statement's time, not the transaction's: one transaction applies many notifications,
    /// and a subject's state is its most recently written entitlement row.
    static let entitlementUpdate = """
        entitlement_id = EXCLUDED.entitlement_id,
            active = EXCLUDED.active, original_transaction_id = EXCLUDED.original_transaction_id,
            source_transaction_id = EXCLUDED.source_transaction_id, ownership_type = EXCLUDED.ownership_type,
            valid_from = EXCLUDED.valid_from, valid_until = EXCLUDED.valid_until, revoked_at = EXCLUDED.revoked_at,
            revocation_reason = EXCLUDED.revocation_reason, revocation_type = EXCLUDED.revocation_type,
            last_signed_date = EXCLUDED.last_signed_date, updated_at = clock_timestamp()
        """
}
