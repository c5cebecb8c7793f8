import AppStoreModels
public import Entitlements
import Foundation
import JWSVerification
public import Logging
public import PipelineRecords
public import PostgresNIO

/// What applying a notification did, as the updater reports it.
public enum ApplyResult: Equatable, Sendable {
    /// Already applied before (same `notificationUUID`): nothing changed.
    case duplicate
    /// Applied (or logged as stale, ignored, unknown, awaiting status) with this outcome.
    case recorded(EntitlementUpdate.Outcome)
}

/// Applies verified notifications to PostgreSQL, several in one transaction (one alone is a batch of one):
/// idempotent by `notificationUUID`, serialized per subject, with the outbox rows and status request of the same
/// change, committed together. Every identity is
/// (environment, app, …): Sandbox never touches Production, one app never another's rows.
public struct EntitlementRepository: Sendable {
    let client: PostgresClient
    let logger: Logger
    let catalog: EntitlementCatalog
    /// How CONSUMPTION_REQUESTs are answered (nil: recorded, never answered).
    let consumptionPolicy: ConsumptionPolicy?
    /// Counts consumption requests by the status they were recorded with.
    let consumptionStatuses: (@Sendable (String) -> Void)?

    public init(
        client: PostgresClient, logger: Logger, catalog: EntitlementCatalog = EntitlementCatalog(),
        consumptionPolicy: ConsumptionPolicy? = nil, consumptionStatuses: (@Sendable (String) -> Void)? = nil
    ) {
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
    public func apply(_ record: VerifiedNotificationRecord, receivedAt: Int64?, topics: PipelineTopics) async throws
        -> ApplyResult
    {
        try await self.apply([EntitlementInput(.notification(record), receivedAt: receivedAt)], topics: topics)[0]
    }

    /// Applies a status snapshot from refund-resolver, logged (and deduplicated) under its ``StatusSnapshot/logID``.
    public func apply(_ snapshot: StatusSnapshot, receivedAt: Int64?, topics: PipelineTopics) async throws
        -> ApplyResult
    {
        try await self.apply([EntitlementInput(.snapshot(snapshot), receivedAt: receivedAt)], topics: topics)[0]
    }

    /// Applies a purchase the app posted (or `iapctl resync` imported), logged under its ``AppPurchaseRecord/logID``.
    /// Its app user is bound to the subject first (``CustomerBindings``); under the `refuse` policy a subject
    /// bound to another user stays as it is and the log says `conflict`.
    public func apply(_ record: AppPurchaseRecord, receivedAt: Int64?, topics: PipelineTopics) async throws
        -> ApplyResult
    {
        try await self.apply([EntitlementInput(.purchase(record), receivedAt: receivedAt)], topics: topics)[0]
    }

    /// Applies several inputs, in order, in one transaction with one commit: every subject of the batch is
    /// locked first (in key order), then the inputs are applied in waves (``Waves``): each wave holds at most
    /// one input per subject, in a subject's order, and costs two statements whatever its size (log and states;
    /// facts, entitlements and events) plus one per rare step (a binding, a move, a migration, a status request). Each input
    /// ends exactly as applied alone: its log insert makes a repeat a duplicate, its state is read after the
    /// earlier inputs of its subject. Returns one result per input; throws, with nothing committed, if any fails.
    public func apply(_ inputs: [EntitlementInput], topics: PipelineTopics) async throws -> [ApplyResult] {
        guard !inputs.isEmpty else { return [] }
        let prepared = inputs.map { input in
            var prepared = self.prepare(input)
            prepared.traceParent = input.traceParent
            if prepared.binding == nil, let previous = prepared.notification.transaction?.previousOriginalTransactionId,
                !previous.isEmpty, previous != prepared.entry.subject
            {
                prepared.migratedFrom = previous
            }
            return prepared
        }
        let logger = self.logger
        return try await self.client.withTransaction(logger: logger) { connection in
            let migrated = prepared.compactMap { input in input.migratedFrom.map { input.entry.scope + $0 } }
            try await SubjectRows.lock(prepared.map(\.entry.lockKey) + migrated, on: connection, logger: logger)
            var results = [ApplyResult](repeating: .duplicate, count: prepared.count)
            for wave in Waves.split(prepared) {
                let outcomes = try await self.apply(wave: wave.map { prepared[$0] }, topics: topics, on: connection)
                for (index, outcome) in zip(wave, outcomes) { results[index] = outcome }
            }
            return results
        }
    }

    // MARK: One input

    /// What the notification log records of an input (encoded under the log's column names, as the wave's
    /// log statement reads it).
    struct LogEntry: Encodable {
        var id: String
        var type: String
        var subtype: String?
        var subject: String
        var environment: String
        var bundleId: String
        var signedDate: Int64
        var receivedAt: Int64?

        enum CodingKeys: String, CodingKey {
            case id, type, subtype, subject, environment
            case bundleId = "bundle_id"
            case signedDate = "signed_date"
            case receivedAt = "received_at"
        }

        /// The prefix that scopes a key to the entry's environment and app.
        var scope: String { self.environment + "/" + self.bundleId + "/" }
        /// The subject's lock, within its environment and app.
        var lockKey: String { self.scope + self.subject }

        /// The entitlement row `entitlement` is stored in, within the entry's environment and app.
        func rowKey(of entitlement: EntitlementState) -> String {
            self.scope + entitlement.customer + "/" + entitlement.productId
        }
    }

    /// An input ready to apply: its log entry, the notification its facts come from, the app user to bind (an
    /// app's purchase) and the rules that decide its update from the subject's state.
    struct PreparedInput: Sendable {
        var entry: LogEntry
        var notification: VerifiedNotification
        var binding: AppPurchaseRecord?
        var rules: @Sendable (SubjectState) -> EntitlementUpdate
        /// The subscription the App Store migrated to this one (`previousOriginalTransactionId` of a transaction
        /// Apple sent: a notification or a status snapshot, never an app's post), locked with the subject.
        var migratedFrom: String?
        /// The trace its events continue.
        var traceParent: String?
    }

    /// The log entry, notification and rules of an input.
    private func prepare(_ input: EntitlementInput) -> PreparedInput {
        let catalog = self.catalog
        switch input.kind {
        case .notification(let record):
            let payload = record.notification.payload
            let entry = LogEntry(
                id: payload.notificationUUID ?? "", type: payload.rawNotificationType ?? "unknown",
                subtype: payload.rawSubtype,
                subject: record.subject, environment: record.environment,
                bundleId: payload.bundleId ?? record.notification.transaction?.bundleId ?? "unknown",
                signedDate: payload.signedDate?.millisecondsSince1970 ?? 0, receivedAt: input.receivedAt)
            return PreparedInput(entry: entry, notification: record.notification) { current in
                EntitlementRules.apply(record.notification, subject: record.subject, current: current, catalog: catalog)
            }
        case .snapshot(let snapshot):
            let entry = LogEntry(
                id: snapshot.logID, type: EntitlementRules.snapshotTypeName, subtype: String(snapshot.status),
                subject: snapshot.subject,
                environment: snapshot.environment, bundleId: snapshot.bundleId, signedDate: snapshot.signedDate,
                receivedAt: input.receivedAt)
            return PreparedInput(entry: entry, notification: EntitlementRules.notification(of: snapshot)) { current in
                EntitlementRules.apply(snapshot: snapshot, current: current, catalog: catalog)
            }
        case .purchase(let record):
            let entry = LogEntry(
                id: record.logID, type: EntitlementRules.appPurchaseTypeName, subtype: record.source.rawValue,
                subject: record.subject,
                environment: record.environment, bundleId: record.bundleId, signedDate: record.signedDate,
                receivedAt: input.receivedAt)
            return PreparedInput(entry: entry, notification: EntitlementRules.notification(of: record), binding: record)
            { current in
                EntitlementRules.apply(appPurchase: record, current: current, catalog: catalog)
            }
        }
    }

    /// One wave within the batch's transaction (its subjects already locked): log inserts and states (a
    /// duplicate stops there), bindings, rules, then the facts of all (transaction, renewal info, subscription
    /// view, events, and the entitlement where it can go with them) whatever the order of arrival, then each
    /// input's rare steps in order, and no state change for a stale input.
    private func apply(wave: [PreparedInput], topics: PipelineTopics, on connection: PostgresConnection) async throws
        -> [ApplyResult]
    {
        let logger = self.logger
        let states = try await SubjectRows.logAndLoadStates(wave.map(\.entry), on: connection, logger: logger)
        var results = [ApplyResult](repeating: .duplicate, count: wave.count)
        var rows: [NotificationFacts.Row] = []
        var decided: [(index: Int, update: EntitlementUpdate, customer: String, entitlementWithFacts: Bool)] = []
        var entitlementKeys = Set<String>()
        for (index, input) in wave.enumerated() {
            guard var current = states[index] else { continue }
            let entry = input.entry, notification = input.notification
            if let binding = input.binding, let appUserId = binding.appUserId {
                let decision = try await CustomerBindings.claim(
                    binding, appUserId: appUserId, entry: entry, on: connection, logger: logger)
                if case .refuse(let owner) = decision {
                    let refused = EntitlementRules.refusedAppPurchase(owner: owner)
                    rows.append(
                        .init(
                            entry: entry, update: refused, notification: notification,
                            customer: current.boundCustomer ?? owner, traceParent: input.traceParent))
                    results[index] = .recorded(.conflict)
                    continue
                }
                current.boundCustomer = appUserId
            }
            if let previous = input.migratedFrom, current.migratedTo == nil,
                let migration = try await SubscriptionMigrations.record(
                    from: previous, to: entry, fallback: Self.migrationFallback(input.notification, previous: previous),
                    on: connection, logger: logger)
            {
                current.migration = migration
                if current.boundCustomer == nil { current.boundCustomer = migration.customer }
            }
            let update = input.rules(current)
            let customer =
                update.entitlement?.customer
                ?? notification.transaction.map { current.customer(of: $0, renewalInfo: notification.renewalInfo) }
                ?? entry.subject
            // The common case writes its entitlement with the facts; a move of the subject's rows, a superseded
            // entitlement, or a row another input of the wave writes too keeps the order of separate statements.
            let key = update.entitlement.map(entry.rowKey)
            let alone = update.movedFrom != nil || update.superseded != nil
            let withFacts = update.outcome != .stale && !alone && key.map { !entitlementKeys.contains($0) } ?? false
            if let key { entitlementKeys.insert(key) }
            if let superseded = update.superseded { entitlementKeys.insert(entry.rowKey(of: superseded)) }
            rows.append(
                .init(
                    entry: entry, update: update, notification: notification, customer: customer,
                    entitlement: withFacts ? update.entitlement : nil, traceParent: input.traceParent))
            decided.append((index, update, customer, withFacts))
            results[index] = .recorded(update.outcome)
        }
        // Facts are kept whatever the order: log outcome, transaction, renewal info, subscription view, events.
        try await NotificationFacts.write(rows, topics: topics, on: connection, logger: logger)
        for (index, update, customer, withFacts) in decided {
            try await self.applyRareSteps(
                of: wave[index], update: update, customer: customer, entitlementWithFacts: withFacts,
                topics: topics, on: connection)
        }
        return results
    }

    /// The customer a migrated subscription keeps when nothing of the previous one is stored yet: the
    /// appAccountToken the new one carries, else the previous one's originalTransactionId (its customer, had its
    /// notifications come first).
    private static func migrationFallback(_ notification: VerifiedNotification, previous: String) -> String {
        guard let transaction = notification.transaction else { return previous }
        let key = CustomerKey.of(transaction: transaction, renewalInfo: notification.renewalInfo)
        return key == transaction.originalTransactionId ? previous : key
    }

    /// What one input needs beyond its facts: its consumption request, the move of its rows to a new customer,
    /// and unless stale, its superseded entitlement, its entitlement (when not written with the facts) and its
    /// status request.
    private func applyRareSteps(
        of input: PreparedInput, update: EntitlementUpdate, customer: String, entitlementWithFacts: Bool,
        topics: PipelineTopics, on connection: PostgresConnection
    ) async throws {
        let logger = self.logger
        let entry = input.entry
        if entry.type == "CONSUMPTION_REQUEST" {
            let status = try await ConsumptionRequests.record(
                entry, notification: input.notification, customer: customer, policy: self.consumptionPolicy,
                topics: topics,
                now: Int64(Date().timeIntervalSince1970 * 1000), on: connection, logger: logger)
            if let status { self.consumptionStatuses?(status) }
        }
        if let previous = update.movedFrom {
            try await CustomerBindings.moveRows(of: entry, from: previous, to: customer, on: connection, logger: logger)
        }
        guard update.outcome != .stale else { return }
        if let superseded = update.superseded {
            try await SubjectRows.upsert(superseded, entry: entry, on: connection, logger: logger)
        }
        if let entitlement = update.entitlement, !entitlementWithFacts {
            try await SubjectRows.upsert(entitlement, entry: entry, on: connection, logger: logger)
        }
        if let request = update.statusRequest {
            try await connection.query(
                """
                INSERT INTO status_requests (request_id, original_transaction_id, environment, bundle_id, reason, notification_uuid)
                VALUES (\(request.requestId), \(request.originalTransactionId), \(request.environment), \(request.bundleId ?? ""),
                        \(request.reason), \(request.notificationUUID))
                ON CONFLICT (request_id) DO NOTHING
                """, logger: logger)
            try await OutboxRows.insert(
                request, traceParent: input.traceParent, topics: topics, on: connection, logger: logger)
        }
    }
}

/// One input of the entitlement-updater, with ingest's receipt time (epoch ms) when known.
public struct EntitlementInput: Sendable {
    /// What is applied.
    public enum Kind: Sendable {
        /// A verified notification from Apple.
        case notification(VerifiedNotificationRecord)
        /// refund-resolver's status snapshot.
        case snapshot(StatusSnapshot)
        /// A purchase the app posted through customer-api (or `iapctl resync` imported).
        case purchase(AppPurchaseRecord)
    }

    public var kind: Kind
    public var receivedAt: Int64?
    /// The W3C `traceparent` of the span that applies it; its events carry it on through the outbox (nil: none).
    public var traceParent: String?

    public init(_ kind: Kind, receivedAt: Int64?, traceParent: String? = nil) {
        self.kind = kind
        self.receivedAt = receivedAt
        self.traceParent = traceParent
    }
}
