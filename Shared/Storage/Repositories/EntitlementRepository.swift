import AppStoreModels
public import Entitlements
import Foundation
import JWSVerification
public import Logging
public import NotificationPipeline
public import PostgresNIO
public import ServiceRuntime

/// What applying a notification did, as the updater reports it.
public enum ApplyResult: Equatable, Sendable {
    /// Already applied before (same `notificationUUID`): nothing changed.
    case duplicate
    /// Applied (or logged as stale, ignored, unknown, awaiting status) with this outcome.
    case recorded(EntitlementUpdate.Outcome)
}

/// Applies verified notifications to PostgreSQL, each in one transaction: idempotent by `notificationUUID`,
/// serialized per subject, with the outbox rows and status request of the same change. Every identity is
/// (environment, app, …): Sandbox never touches Production, one app never another's rows.
public struct EntitlementRepository: Sendable {
    let client: PostgresClient
    let logger: Logger
    let catalog: EntitlementCatalog
    /// How CONSUMPTION_REQUESTs are answered (nil: recorded, never answered).
    let consumptionPolicy: ConsumptionPolicy?
    /// Counts consumption requests by the status they were recorded with.
    let consumptionStatuses: LabelledCounter?

    public init(client: PostgresClient, logger: Logger, catalog: EntitlementCatalog = EntitlementCatalog(),
                consumptionPolicy: ConsumptionPolicy? = nil, consumptionStatuses: LabelledCounter? = nil) {
        self.client = client
        self.logger = logger
        self.catalog = catalog
        self.consumptionPolicy = consumptionPolicy
        self.consumptionStatuses = consumptionStatuses
    }

    /// Stores consumption facts the app team recorded through customer-api.
    public func apply(_ facts: ConsumptionFactsRecord) async throws {
        try await ConsumptionRequests.store(facts, client: self.client, logger: self.logger)
    }

    /// Applies refund-resolver's report on a consumption answer.
    public func apply(_ outcome: ConsumptionOutcome) async throws {
        try await ConsumptionRequests.apply(outcome, client: self.client, logger: self.logger)
    }

    /// Applies one verified notification; `receivedAt` is ingest's receipt time (epoch ms), when known.
    public func apply(_ record: VerifiedNotificationRecord, receivedAt: Int64?, topics: PipelineTopics) async throws -> ApplyResult {
        let payload = record.notification.payload
        let entry = LogEntry(
            id: payload.notificationUUID ?? "", type: payload.rawNotificationType ?? "unknown", subtype: payload.rawSubtype, subject: record.subject,
            environment: record.environment, bundleId: payload.bundleId ?? record.notification.transaction?.bundleId ?? "unknown",
            signedDate: payload.signedDate?.millisecondsSince1970 ?? 0, receivedAt: receivedAt)
        let catalog = self.catalog
        return try await self.apply(entry, notification: record.notification, topics: topics) { current in
            EntitlementRules.apply(record.notification, subject: record.subject, current: current, catalog: catalog)
        }
    }

    /// Applies a status snapshot from refund-resolver, logged (and deduplicated) under its ``StatusSnapshot/logID``.
    public func apply(_ snapshot: StatusSnapshot, receivedAt: Int64?, topics: PipelineTopics) async throws -> ApplyResult {
        let entry = LogEntry(
            id: snapshot.logID, type: EntitlementRules.snapshotTypeName, subtype: String(snapshot.status), subject: snapshot.subject,
            environment: snapshot.environment, bundleId: snapshot.bundleId, signedDate: snapshot.signedDate, receivedAt: receivedAt)
        let catalog = self.catalog
        return try await self.apply(entry, notification: EntitlementRules.notification(of: snapshot), topics: topics) { current in
            EntitlementRules.apply(snapshot: snapshot, current: current, catalog: catalog)
        }
    }

    /// Applies a purchase the app posted (or `iapctl resync` imported), logged under its ``AppPurchaseRecord/logID``.
    /// Its app user is bound to the subject first (``CustomerBindings``); under the `refuse` policy a subject
    /// bound to another user stays as it is and the log says `conflict`.
    public func apply(_ record: AppPurchaseRecord, receivedAt: Int64?, topics: PipelineTopics) async throws -> ApplyResult {
        let entry = LogEntry(
            id: record.logID, type: EntitlementRules.appPurchaseTypeName, subtype: record.source.rawValue, subject: record.subject,
            environment: record.environment, bundleId: record.bundleId, signedDate: record.signedDate, receivedAt: receivedAt)
        let catalog = self.catalog
        return try await self.apply(entry, notification: EntitlementRules.notification(of: record), topics: topics, binding: record) { current in
            EntitlementRules.apply(appPurchase: record, current: current, catalog: catalog)
        }
    }

    /// What the notification log records of an input.
    struct LogEntry {
        var id: String
        var type: String
        var subtype: String?
        var subject: String
        var environment: String
        var bundleId: String
        var signedDate: Int64
        var receivedAt: Int64?
    }

    /// One transaction: log insert (a duplicate stops here), per-subject lock, rules, then the facts (transaction,
    /// renewal info, subscription view, events) whatever the order of arrival, and the state unless stale.
    private func apply(_ entry: LogEntry, notification: VerifiedNotification, topics: PipelineTopics, binding: AppPurchaseRecord? = nil,
                       rules: @escaping @Sendable (SubjectState) -> EntitlementUpdate) async throws -> ApplyResult {
        let logger = self.logger
        let signedDate = entry.signedDate
        let policy = self.consumptionPolicy, statuses = self.consumptionStatuses
        return try await self.client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext(\(entry.environment + "/" + entry.bundleId + "/" + entry.subject)))", logger: logger)
            let inserted = try await connection.query("""
                INSERT INTO notification_log (notification_uuid, notification_type, subtype, subject, environment, bundle_id, signed_date,
                                              received_at, outcome)
                VALUES (\(entry.id), \(entry.type), \(entry.subtype), \(entry.subject), \(entry.environment), \(entry.bundleId),
                        \(signedDate), \(entry.receivedAt), 'pending')
                ON CONFLICT (notification_uuid) DO UPDATE SET duplicates = notification_log.duplicates + 1
                RETURNING (xmax = 0)
                """, logger: logger)
            // A repeat only counts (the console shows how often Apple delivered it).
            var isNew = false
            for try await value in inserted.decode(Bool.self) { isNew = value }
            guard isNew else { return .duplicate }

            var current = try await Self.loadState(entry, on: connection, logger: logger)
            if let binding, let appUserId = binding.appUserId {
                let bound = try await CustomerBindings.bind(
                    appUserId, entry: entry, source: binding.source.rawValue, policy: binding.onConflict, current: current.boundCustomer,
                    on: connection, logger: logger)
                guard bound else {
                    let refused = EntitlementRules.refusedAppPurchase(boundTo: current.boundCustomer ?? "")
                    try await NotificationFacts.write(entry, update: refused, notification: notification, customer: current.boundCustomer ?? "",
                                                      topics: topics, on: connection, logger: logger)
                    return .recorded(.conflict)
                }
                current.boundCustomer = appUserId
            }
            let update = rules(current)
            let customer = update.entitlement?.customer ?? notification.transaction.map { current.customer(of: $0, renewalInfo: notification.renewalInfo) }
                ?? entry.subject
            // Facts are kept whatever the order: log outcome, transaction, renewal info, subscription view, events.
            try await NotificationFacts.write(entry, update: update, notification: notification, customer: customer, topics: topics,
                                              on: connection, logger: logger)
            if entry.type == "CONSUMPTION_REQUEST" {
                let status = try await ConsumptionRequests.record(
                    entry, notification: notification, customer: customer, policy: policy, topics: topics,
                    now: Int64(Date().timeIntervalSince1970 * 1000), on: connection, logger: logger)
                if let status { statuses?.increment(status) }
            }
            if let previous = update.movedFrom {
                try await CustomerBindings.moveRows(of: entry, from: previous, to: customer, on: connection, logger: logger)
            }
            guard update.outcome != .stale else { return .recorded(.stale) }
            if let superseded = update.superseded {
                try await Self.upsert(superseded, entry: entry, on: connection, logger: logger)
            }
            if let entitlement = update.entitlement {
                try await Self.upsert(entitlement, entry: entry, on: connection, logger: logger)
            }
            if let request = update.statusRequest {
                try await connection.query("""
                    INSERT INTO status_requests (request_id, original_transaction_id, environment, bundle_id, reason, notification_uuid)
                    VALUES (\(request.requestId), \(request.originalTransactionId), \(request.environment), \(request.bundleId ?? ""),
                            \(request.reason), \(request.notificationUUID))
                    ON CONFLICT (request_id) DO NOTHING
                    """, logger: logger)
                try await OutboxRows.insert(request, topics: topics, on: connection, logger: logger)
            }
            return .recorded(update.outcome)
        }
    }

    // MARK: State

    /// The subject's newest applied signing time, its bound app user and its entitlement, within the entry's
    /// environment and app (one query).
    static func loadState(_ entry: LogEntry, on connection: PostgresConnection, logger: Logger) async throws -> SubjectState {
        var state = SubjectState()
        let rows = try await connection.query("""
            SELECT (SELECT max(signed_date) FROM notification_log
                    WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId) AND subject = \(entry.subject) AND advances_subject),
                   (SELECT app_user_id FROM customer_bindings
                    WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId) AND original_transaction_id = \(entry.subject)),
                   e.customer, e.product_id, e.active, e.original_transaction_id, e.source_transaction_id, e.ownership_type,
                   e.valid_from, e.valid_until, e.revoked_at, e.revocation_reason, e.revocation_type, e.entitlement_id
            FROM (SELECT 1) AS one LEFT JOIN LATERAL (
                SELECT * FROM entitlements
                WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId) AND original_transaction_id = \(entry.subject)
                ORDER BY updated_at DESC LIMIT 1) AS e ON true
            """, logger: logger)
        for try await row in rows.decode(
            (Int64?, String?, String?, String?, Bool?, String?, String?, String?, Int64?, Int64?, Int64?, Int32?, String?, String?).self) {
            state.lastSignedDate = row.0
            state.boundCustomer = row.1
            guard let customer = row.2, let productId = row.3, let active = row.4, let original = row.5, let source = row.6,
                  let ownership = row.7 else { continue }
            state.entitlement = EntitlementState(
                customer: customer, productId: productId, active: active, originalTransactionId: original, sourceTransactionId: source,
                ownershipType: ownership, validFrom: row.8, validUntil: row.9, revokedAt: row.10, revocationReason: row.11,
                revocationType: row.12, entitlementId: row.13)
        }
        return state
    }

    /// Writes an entitlement (one row per environment, app, customer and product).
    static func upsert(_ e: EntitlementState, entry: LogEntry, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO entitlements (environment, bundle_id, customer, product_id, entitlement_id, active, original_transaction_id,
                                      source_transaction_id, ownership_type, valid_from, valid_until, revoked_at, revocation_reason,
                                      revocation_type, last_signed_date)
            VALUES (\(entry.environment), \(entry.bundleId), \(e.customer), \(e.productId), \(e.entitlementId ?? e.productId), \(e.active),
                    \(e.originalTransactionId), \(e.sourceTransactionId), \(e.ownershipType), \(e.validFrom), \(e.validUntil), \(e.revokedAt),
                    \(e.revocationReason), \(e.revocationType), \(entry.signedDate))
            ON CONFLICT (environment, bundle_id, customer, product_id) DO UPDATE SET
                entitlement_id = EXCLUDED.entitlement_id,
                active = EXCLUDED.active, original_transaction_id = EXCLUDED.original_transaction_id,
                source_transaction_id = EXCLUDED.source_transaction_id, ownership_type = EXCLUDED.ownership_type,
                valid_from = EXCLUDED.valid_from, valid_until = EXCLUDED.valid_until, revoked_at = EXCLUDED.revoked_at,
                revocation_reason = EXCLUDED.revocation_reason, revocation_type = EXCLUDED.revocation_type,
                last_signed_date = EXCLUDED.last_signed_date, updated_at = now()
            """, logger: logger)
    }
}
