import AppStoreModels
public import Entitlements
import Foundation
public import PipelineRecords

/// Decides what the entitlement-updater writes for a wave of inputs, as plain values: which rules apply, the
/// claims and migrations that bind a subject, each input's new state and outcome (stale, conflict …), its
/// events and the topics they go to. It reads nothing and writes nothing: Storage loads what it needs
/// (``InputLoad``) and runs the ``WavePlan`` it returns.
public struct EntitlementPlanner: Sendable {
    /// The products' entitlements.
    public var catalog: EntitlementCatalog
    /// Where events and status requests go.
    public var topics: PipelineTopics

    public init(catalog: EntitlementCatalog = EntitlementCatalog(), topics: PipelineTopics = PipelineTopics()) {
        self.catalog = catalog
        self.topics = topics
    }

    // MARK: A wave

    /// Decides one wave (at most one input per subject, its subjects locked, `loads` read for it in the same
    /// order). Inputs whose state is nil are duplicates and write nothing.
    public func decide(wave: [PreparedInput], loads: [InputLoad]) throws -> WavePlan {
        precondition(wave.count == loads.count, "one load per input")
        var plan = WavePlan(results: [ApplyResult](repeating: .duplicate, count: wave.count))
        var entitlementKeys = Set<String>()
        for (index, input) in wave.enumerated() {
            guard var current = loads[index].state else { continue }
            let entry = input.entry
            if let claim = input.claim {
                let refusal: (update: EntitlementUpdate, owner: String)?
                switch Self.claim(claim.record, appUserId: claim.appUserId, entry: entry, owner: loads[index].owner) {
                case .refused(let owner): refusal = (EntitlementRules.refusedAppPurchase(owner: owner), owner)
                case .unproven: refusal = (EntitlementRules.unprovenAppPurchase(), claim.record.subject)
                case .holds(let binding):
                    refusal = nil
                    if let binding { plan.bindings.append(binding) }
                    current.boundCustomer = claim.appUserId
                }
                if let refusal {
                    plan.facts.append(
                        try self.factsRow(
                            input, update: refusal.update, customer: current.boundCustomer ?? refusal.owner,
                            entitlement: nil))
                    plan.results[index] = .recorded(.conflict)
                    continue
                }
            }
            if let previous = input.migratedFrom, current.migratedTo == nil, let stored = loads[index].previous,
                !stored.migrated
            {
                let migration = Self.migration(from: previous, stored: stored, to: input)
                plan.migrations.append(migration)
                current.migration = SubjectMigration(
                    previousOriginalTransactionId: previous, customer: migration.customer,
                    previousEntitlement: stored.entitlement)
                if current.boundCustomer == nil { current.boundCustomer = migration.customer }
            }
            let update = self.rules(for: input, current: current)
            let customer =
                update.entitlement?.customer
                ?? input.notification.transaction.map {
                    current.customer(of: $0, renewalInfo: input.notification.renewalInfo)
                }
                ?? entry.subject
            // The common case writes its entitlement with the facts; a move of the subject's rows, a superseded
            // entitlement, or a row another input of the wave writes too keeps the order of separate statements.
            let key = update.entitlement.map(entry.rowKey)
            let alone = update.movedFrom != nil || update.superseded != nil
            let withFacts = update.outcome != .stale && !alone && key.map { !entitlementKeys.contains($0) } ?? false
            if let key { entitlementKeys.insert(key) }
            if let superseded = update.superseded { entitlementKeys.insert(entry.rowKey(of: superseded)) }
            plan.facts.append(
                try self.factsRow(
                    input, update: update, customer: customer, entitlement: withFacts ? update.entitlement : nil))
            plan.steps += try self.steps(
                of: input, update: update, customer: customer, entitlementWithFacts: withFacts)
            plan.results[index] = .recorded(update.outcome)
        }
        return plan
    }

    // MARK: Rules, claims, migrations

    /// The rules that decide an input's update from its subject's state.
    public func rules(for input: PreparedInput, current: SubjectState) -> EntitlementUpdate {
        switch input.kind {
        case .notification(let record):
            EntitlementRules.apply(
                record.notification, subject: record.subject, current: current, catalog: self.catalog)
        case .snapshot(let snapshot):
            EntitlementRules.apply(snapshot: snapshot, current: current, catalog: self.catalog)
        case .purchase(let record):
            EntitlementRules.apply(appPurchase: record, current: current, catalog: self.catalog)
        }
    }

    /// What an app purchase's claim on its subject comes to.
    enum Claim: Equatable {
        /// Another owner keeps it (the `refuse` policy, or a transfer without a proof that holds).
        case refused(owner: String)
        /// Nobody owns it and the claim brought no proof from the buyer's device that holds: it stays unowned.
        case unproven
        /// The claimant owns it: bound now (the binding to write), or bound to them already (nil).
        case holds(WavePlan.Binding?)
    }

    /// An app purchase's claim on its subject (``PurchaseOwnership``, from the owner read under the subject's lock): a
    /// proof counts only when it holds for the transaction it came with (a device's hash is checked again).
    static func claim(
        _ record: AppPurchaseRecord, appUserId: String, entry: NotificationLogEntry, owner: PurchaseOwnership.Owner?
    ) -> Claim {
        let proof = record.transferProof.flatMap { $0.holds(for: record.transaction) ? $0 : nil }
        switch PurchaseOwnership.decide(
            claimant: appUserId, owner: owner ?? .init(), policy: record.onConflict, proof: proof)
        {
        case .refuse(let owner): return .refused(owner: owner)
        case .needsProof: return .unproven
        case .alreadyOwned: return .holds(nil)
        case .bind:
            return .holds(.init(entry: entry, appUserId: appUserId, source: record.source.rawValue, proof: proof))
        case .transfer(_, let proof):
            return .holds(.init(entry: entry, appUserId: appUserId, source: record.source.rawValue, proof: proof))
        }
    }

    /// The migration of `previous` to the input's subject, recorded once: the customer the subject keeps is the
    /// previous subscription's bound app user, else its newest entitlement's customer, else ``migrationFallback``.
    static func migration(from previous: String, stored: PreviousSubscription, to input: PreparedInput)
        -> WavePlan.Migration
    {
        let customer =
            stored.boundCustomer ?? stored.entitlement?.customer
            ?? Self.migrationFallback(input.notification, previous: previous)
        return WavePlan.Migration(previous: previous, entry: input.entry, customer: customer)
    }

    /// The customer a migrated subscription keeps when nothing of the previous one is stored yet: the
    /// appAccountToken the new one carries, else the previous one's originalTransactionId (its customer, had its
    /// notifications come first).
    static func migrationFallback(_ notification: VerifiedNotification, previous: String) -> String {
        guard let transaction = notification.transaction else { return previous }
        let key = CustomerKey.of(transaction: transaction, renewalInfo: notification.renewalInfo)
        return key == transaction.originalTransactionId ? previous : key
    }

    // MARK: Writes

    /// What one input needs beyond its facts: its consumption request, the move of its rows to a new customer,
    /// and unless stale, its superseded entitlement, its entitlement (when not written with the facts) and its
    /// status request.
    func steps(
        of input: PreparedInput, update: EntitlementUpdate, customer: String, entitlementWithFacts: Bool
    ) throws -> [WavePlan.Step] {
        let entry = input.entry
        var steps: [WavePlan.Step] = []
        if entry.type == "CONSUMPTION_REQUEST" {
            steps.append(.consumptionRequest(entry, input.notification, customer: customer))
        }
        if let previous = update.movedFrom { steps.append(.moveRows(entry, from: previous, to: customer)) }
        guard update.outcome != .stale else { return steps }
        if let superseded = update.superseded { steps.append(.upsert(superseded, entry)) }
        if let entitlement = update.entitlement, !entitlementWithFacts { steps.append(.upsert(entitlement, entry)) }
        if let request = update.statusRequest {
            steps.append(
                .statusRequest(request, try self.outboxEvent(request, traceParent: input.traceParent))
            )
        }
        return steps
    }

    /// An input's facts row, its events mapped to their topics.
    func factsRow(
        _ input: PreparedInput, update: EntitlementUpdate, customer: String, entitlement: EntitlementState?
    ) throws -> WavePlan.FactsRow {
        WavePlan.FactsRow(
            entry: input.entry, update: update, notification: input.notification, customer: customer,
            entitlement: entitlement,
            events: try update.events.map { try self.outboxEvent($0, traceParent: input.traceParent) }
        )
    }

    /// The topic an event's stream goes to.
    public func topic(of stream: EntitlementEvent.Stream) -> String {
        switch stream {
        case .changes: self.topics.entitlementChanges
        case .family: self.topics.entitlementFamily
        case .revocations: self.topics.entitlementRevocations
        }
    }

    /// An event's outbox row, its payload the event's canonical JSON written by the event itself.
    func outboxEvent(_ event: EntitlementEvent, traceParent: String?) throws -> OutboxEvent {
        OutboxEvent(
            id: event.eventId, topic: self.topic(of: event.stream), key: event.key,
            payload: String(decoding: try event.canonicalJSON(), as: UTF8.self), environment: event.facts.environment,
            bundleId: event.facts.bundleId, traceParent: traceParent, subject: event.subject)
    }

    /// A status request's outbox row, keyed by the subscription within its environment and app, its payload the
    /// request's canonical JSON.
    func outboxEvent(_ request: StatusRequest, traceParent: String?) throws -> OutboxEvent {
        OutboxEvent(
            id: request.requestId, topic: self.topics.statusRequests, key: request.key,
            payload: String(decoding: try FastJSONEncoder.canonical.encode(request), as: UTF8.self),
            environment: request.environment,
            bundleId: request.bundleId ?? "", traceParent: traceParent)
    }
}
