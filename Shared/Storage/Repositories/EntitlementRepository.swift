public import EntitlementDecisions
public import Entitlements
import Foundation
public import Logging
public import PipelineRecords
public import PostgresNIO

/// Applies verified notifications to PostgreSQL, several in one transaction (one alone is a batch of one):
/// idempotent by `notificationUUID`, serialized per subject, with the outbox rows and status request of the same
/// change, committed together. Every identity is
/// (environment, app, …): Sandbox never touches Production, one app never another's rows.
public struct EntitlementRepository: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// Decides each wave (rules, claims, migrations, events and their topics); this repository only reads and writes.
    let planner: EntitlementPlanner
    /// Where the status requests and consumption answers it writes to the outbox go.
    var topics: PipelineTopics { self.planner.topics }
    /// How CONSUMPTION_REQUESTs are answered (nil: recorded, never answered).
    let consumptionPolicy: ConsumptionPolicy?
    /// Counts consumption requests by the status they were recorded with.
    let consumptionStatuses: (@Sendable (String) -> Void)?

    /// A repository whose events and requests go to `topics` (given once, here).
    public init(
        client: PostgresClient, logger: Logger, topics: PipelineTopics = PipelineTopics(),
        catalog: EntitlementCatalog = EntitlementCatalog(),
        consumptionPolicy: ConsumptionPolicy? = nil, consumptionStatuses: (@Sendable (String) -> Void)? = nil
    ) {
        self.client = client
        self.logger = logger
        self.planner = EntitlementPlanner(catalog: catalog, topics: topics)
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
    public func apply(_ record: VerifiedNotificationRecord, receivedAt: Int64?) async throws
        -> ApplyResult
    {
        try await self.apply([EntitlementInput(.notification(record), receivedAt: receivedAt)])[0]
    }

    /// Applies a status snapshot from refund-resolver, logged (and deduplicated) under its ``StatusSnapshot/logID``.
    public func apply(_ snapshot: StatusSnapshot, receivedAt: Int64?) async throws
        -> ApplyResult
    {
        try await self.apply([EntitlementInput(.snapshot(snapshot), receivedAt: receivedAt)])[0]
    }

    /// Applies a purchase the app posted (or `iapctl resync` imported), logged under its ``AppPurchaseRecord/logID``.
    /// Its app user is bound to the subject first (``CustomerBindings``); under the `refuse` policy a subject
    /// bound to another user stays as it is and the log says `conflict`.
    public func apply(_ record: AppPurchaseRecord, receivedAt: Int64?) async throws
        -> ApplyResult
    {
        try await self.apply([EntitlementInput(.purchase(record), receivedAt: receivedAt)])[0]
    }

    /// Applies several inputs, in order, in one transaction with one commit: every subject of the batch is
    /// locked first (in key order), then the inputs are applied in waves (``Waves``): each wave holds at most
    /// one input per subject, in a subject's order, and costs two statements whatever its size (log and states;
    /// facts, entitlements and events) plus one per rare step (a binding, a move, a migration, a status request). Each input
    /// ends exactly as applied alone: its log insert makes a repeat a duplicate, its state is read after the
    /// earlier inputs of its subject. Returns one result per input; throws, with nothing committed, if any fails.
    public func apply(_ inputs: [EntitlementInput]) async throws -> [ApplyResult] {
        guard !inputs.isEmpty else { return [] }
        let prepared = inputs.map(PreparedInput.init)
        let logger = self.logger
        return try await self.client.withTransaction(logger: logger) { connection in
            try await SubjectRows.lock(prepared.flatMap(\.lockKeys), on: connection, logger: logger)
            var results = [ApplyResult](repeating: .duplicate, count: prepared.count)
            for wave in Waves.split(prepared) {
                let outcomes = try await self.apply(wave: wave.map { prepared[$0] }, on: connection)
                for (index, outcome) in zip(wave, outcomes) { results[index] = outcome }
            }
            return results
        }
    }

    // MARK: One wave

    /// One wave within the batch's transaction (its subjects already locked): reads what the planner needs (log
    /// inserts and states, a duplicate stops there; owners of claimed subjects; subscriptions migrated from), lets
    /// it decide, then writes its plan: bindings and migrations, the facts of all (transaction, renewal info,
    /// subscription view, events, and the entitlement where it can go with them) whatever the order of arrival,
    /// then each input's rare steps in order.
    private func apply(wave: [PreparedInput], on connection: PostgresConnection) async throws -> [ApplyResult] {
        let loads = try await self.load(wave, on: connection)
        let plan = try self.planner.decide(wave: wave, loads: loads)
        try await self.write(plan, on: connection)
        return plan.results
    }

    /// What the planner reads for a wave: each input's state, and the owner or previous subscription it needs.
    private func load(_ wave: [PreparedInput], on connection: PostgresConnection) async throws -> [InputLoad] {
        let logger = self.logger
        let states = try await SubjectRows.logAndLoadStates(wave.map(\.entry), on: connection, logger: logger)
        var loads: [InputLoad] = []
        loads.reserveCapacity(wave.count)
        for (input, state) in zip(wave, states) {
            var load = InputLoad(state: state)
            if let state {
                let entry = input.entry
                if let claim = input.claim {
                    load.owner = try await PurchaseOwners.owner(
                        environment: entry.environment, bundleId: entry.bundleId, subject: entry.subject,
                        claimedToken: PurchaseOwnership.accountToken(of: claim.record.transaction), on: connection,
                        logger: logger)
                }
                if let previous = input.migratedFrom, state.migratedTo == nil {
                    load.previous = try await SubscriptionMigrations.previous(
                        previous, of: entry, on: connection, logger: logger)
                }
            }
            loads.append(load)
        }
        return loads
    }

    /// Runs a wave's plan, in its order.
    private func write(_ plan: WavePlan, on connection: PostgresConnection) async throws {
        let logger = self.logger
        for binding in plan.bindings { try await CustomerBindings.bind(binding, on: connection, logger: logger) }
        for migration in plan.migrations {
            try await SubscriptionMigrations.record(migration, on: connection, logger: logger)
        }
        // Facts are kept whatever the order: log outcome, transaction, renewal info, subscription view, events.
        try await NotificationFacts.write(plan.facts, on: connection, logger: logger)
        for step in plan.steps {
            switch step {
            case .consumptionRequest(let entry, let notification, let customer):
                let status = try await ConsumptionRequests.record(
                    entry, notification: notification, customer: customer, policy: self.consumptionPolicy,
                    topics: self.topics, now: Int64(Date().timeIntervalSince1970 * 1000), on: connection,
                    logger: logger)
                if let status { self.consumptionStatuses?(status) }
            case .moveRows(let entry, let previous, let customer):
                try await CustomerBindings.moveRows(
                    of: entry, from: previous, to: customer, on: connection, logger: logger)
            case .upsert(let entitlement, let entry):
                try await SubjectRows.upsert(entitlement, entry: entry, on: connection, logger: logger)
            case .statusRequest(let request, let event):
                try await OutboxRows.insert(request, event: event, on: connection, logger: logger)
            }
        }
    }
}
