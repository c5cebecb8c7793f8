import AppStoreModels
import EntitlementDecisions
import Entitlements
import PipelineRecords
import TestSupport
import Testing

/// The updater's decisions for a wave, as plain values and without any server: outcomes (applied, duplicate,
/// stale, conflict, awaiting status), claims and bindings, migrations, rare steps, and the topics events go to.
@Suite struct EntitlementPlannerTests {
    /// Topics renamed from the defaults, so a test sees which configured name each event takes.
    static let topics: PipelineTopics = {
        var topics = PipelineTopics()
        topics.entitlementChanges = "team.changes"
        topics.entitlementFamily = "team.family"
        topics.entitlementRevocations = "team.revocations"
        topics.statusRequests = "team.status"
        return topics
    }()
    let planner = EntitlementPlanner(topics: Self.topics)

    /// One input decided alone against `load`.
    func decide(_ input: EntitlementInput, _ load: InputLoad) throws -> WavePlan {
        try self.planner.decide(wave: [PreparedInput(input)], loads: [load])
    }

    /// A notification as the updater consumes it.
    static func input(_ record: VerifiedNotificationRecord) -> EntitlementInput {
        EntitlementInput(.notification(record), receivedAt: nil, traceParent: "00-trace-span-01")
    }

    /// An app's post of `record`'s transaction for `user`.
    static func claim(
        _ record: VerifiedNotificationRecord, user: String, policy: AppPurchaseRecord.ConflictPolicy = .refuse,
        proof: TransferProof? = nil
    ) -> EntitlementInput {
        EntitlementInput(
            .purchase(
                AppPurchaseRecord(
                    requestId: "req-\(user)", appUserId: user, onConflict: policy, transferProof: proof,
                    source: .signedTransaction, environment: record.environment,
                    transaction: record.notification.transaction!, signedTransactionInfo: "signed")),
            receivedAt: nil)
    }

    /// The state a subject is in after `record` was applied for `customer` (bound to them when `bound`).
    func state(after record: VerifiedNotificationRecord, customer: String, bound: Bool) throws -> SubjectState {
        var entitlement = try #require(
            try self.decide(Self.input(record), InputLoad(state: SubjectState())).facts[0].entitlement)
        entitlement.customer = customer
        return SubjectState(
            lastSignedDate: record.notification.payload.signedDate?.millisecondsSince1970, entitlement: entitlement,
            boundCustomer: bound ? customer : nil)
    }

    static let subscribed = VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "sub-1", day: 0, expiresDay: 30)

    // MARK: Outcomes

    @Test func aNewSubscriptionWritesItsEntitlementWithItsFactsAndItsEventsOnTheConfiguredTopic() throws {
        let plan = try self.decide(Self.input(Self.subscribed), InputLoad(state: SubjectState()))
        #expect(plan.results == [.recorded(.applied)])
        let row = try #require(plan.facts.first)
        #expect(row.entitlement?.active == true)
        #expect(row.entitlement?.customer == "sub-1", "no token, no binding: keyed by originalTransactionId")
        #expect(row.customer == "sub-1")
        #expect(!row.events.isEmpty)
        #expect(row.events.allSatisfy { $0.topic == "team.changes" && $0.traceParent == "00-trace-span-01" })
        #expect(row.events.allSatisfy { $0.key == "Sandbox/com.example.app/sub-1" && $0.payload.contains($0.id) })
        #expect(plan.steps.isEmpty && plan.bindings.isEmpty && plan.migrations.isEmpty)
    }

    @Test func aDuplicateWritesNothing() throws {
        let plan = try self.decide(Self.input(Self.subscribed), InputLoad(state: nil))
        #expect(plan.results == [.duplicate])
        #expect(plan.facts.isEmpty && plan.steps.isEmpty && plan.bindings.isEmpty)
    }

    @Test func anOlderNotificationIsStaleItsFactsKeptAndNoEntitlementWritten() throws {
        let renewed = VerifiedRecords.step("DID_RENEW", original: "sub-1", day: 30, expiresDay: 60)
        let current = try self.state(after: renewed, customer: "sub-1", bound: false)
        let late = VerifiedRecords.step(
            "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", original: "sub-1", day: 10, expiresDay: 30)
        let plan = try self.decide(Self.input(late), InputLoad(state: current))
        #expect(plan.results == [.recorded(.stale)])
        #expect(plan.facts.count == 1, "a stale notification's facts are still stored and published")
        #expect(plan.facts[0].entitlement == nil)
        #expect(plan.steps.isEmpty, "nothing moves the entitlement back")
    }

    @Test func aRefundWithoutStatusAsksRefundResolverOnTheStatusTopic() throws {
        let current = try self.state(after: Self.subscribed, customer: "sub-1", bound: false)
        let refund = VerifiedRecords.step("REFUND", original: "sub-1", day: 5, expiresDay: 30, transactionDay: 0)
        let plan = try self.decide(Self.input(refund), InputLoad(state: current))
        #expect(plan.results == [.recorded(.awaitingStatus)])
        guard case .statusRequest(let request, let event) = try #require(plan.steps.last) else {
            Issue.record("no status request: \(plan.steps)")
            return
        }
        #expect(event.topic == "team.status" && event.id == request.requestId && event.key == request.key)
        #expect(event.traceParent == "00-trace-span-01")
    }

    @Test func aConsumptionRequestIsRecordedForTheSubjectsCustomer() throws {
        let current = try self.state(after: Self.subscribed, customer: "user-1", bound: true)
        let request = VerifiedRecords.step(
            "CONSUMPTION_REQUEST", original: "sub-1", day: 3, expiresDay: 30, transactionDay: 0)
        let plan = try self.decide(Self.input(request), InputLoad(state: current))
        guard case .consumptionRequest(let entry, _, let customer) = try #require(plan.steps.first) else {
            Issue.record("no consumption request: \(plan.steps)")
            return
        }
        #expect(entry.type == "CONSUMPTION_REQUEST" && customer == "user-1")
    }

    @Test func everyStreamGoesToItsConfiguredTopic() {
        #expect(self.planner.topic(of: .changes) == "team.changes")
        #expect(self.planner.topic(of: .family) == "team.family")
        #expect(self.planner.topic(of: .revocations) == "team.revocations")
    }

    // MARK: Claims

    @Test func aPurchaseNobodyOwnsIsBoundToItsClaimantOnlyWithTheDevicesProof() throws {
        let unproven = try self.decide(
            Self.claim(Self.subscribed, user: "stranger"), InputLoad(state: SubjectState(), owner: .init()))
        #expect(unproven.results == [.recorded(.conflict)], "a bare claim on an unowned purchase binds nothing")
        #expect(unproven.bindings.isEmpty && unproven.facts.map(\.update.outcome) == [.conflict])
        #expect(
            unproven.facts[0].customer == Self.subscribed.notification.transaction?.originalTransactionId,
            "the facts stay unowned")

        let proof = TransferProof.admin(operator: "onboarding")
        let plan = try self.decide(
            Self.claim(Self.subscribed, user: "user-1", proof: proof), InputLoad(state: SubjectState(), owner: .init()))
        #expect(plan.results == [.recorded(.applied)])
        #expect(plan.bindings.map(\.appUserId) == ["user-1"] && plan.bindings[0].proof == proof, "bound on its proof")
        #expect(plan.facts[0].customer == "user-1")
    }

    @Test func aClaimOnAnotherUsersPurchaseIsRefusedAndChangesNothing() throws {
        let current = try self.state(after: Self.subscribed, customer: "user-1", bound: true)
        for policy in [AppPurchaseRecord.ConflictPolicy.refuse, .transfer] {
            let plan = try self.decide(
                Self.claim(Self.subscribed, user: "user-2", policy: policy),
                InputLoad(state: current, owner: .init(boundTo: "user-1")))
            #expect(plan.results == [.recorded(.conflict)], "\(policy): a transfer needs proof")
            #expect(plan.bindings.isEmpty && plan.steps.isEmpty)
            #expect(plan.facts.map(\.update.outcome) == [.conflict] && plan.facts[0].entitlement == nil)
            #expect(plan.facts[0].customer == "user-1", "the facts stay with the owner")
        }
    }

    @Test func aTransferWithAnOperatorsProofBindsAndMovesTheRows() throws {
        let current = try self.state(after: Self.subscribed, customer: "user-1", bound: true)
        let plan = try self.decide(
            Self.claim(Self.subscribed, user: "user-2", policy: .transfer, proof: .admin(operator: "agent-7")),
            InputLoad(state: current, owner: .init(boundTo: "user-1")))
        #expect(plan.results == [.recorded(.applied)])
        #expect(plan.bindings.map(\.appUserId) == ["user-2"] && plan.bindings[0].proof == .admin(operator: "agent-7"))
        let moves = plan.steps.compactMap { step -> String? in
            guard case .moveRows(_, let from, let to) = step else { return nil }
            return "\(from) → \(to)"
        }
        #expect(moves == ["user-1 → user-2"])
    }

    @Test func aDeviceProofThatDoesNotHoldForTheTransactionIsNoProof() throws {
        let current = try self.state(after: Self.subscribed, customer: "user-1", bound: true)
        let plan = try self.decide(
            Self.claim(
                Self.subscribed, user: "user-2", policy: .transfer,
                proof: .device(verificationId: "8E0B3A53-0D4C-4C4B-9E0B-1F2A3B4C5D6E")),
            InputLoad(state: current, owner: .init(boundTo: "user-1")))
        #expect(plan.results == [.recorded(.conflict)])
        #expect(plan.bindings.isEmpty)
    }

    // MARK: Migrations

    /// A notification of `new` naming `previous` as the subscription it was migrated from.
    static func migrated(to new: String, from previous: String) -> VerifiedNotificationRecord {
        var record = VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: new, day: 40, expiresDay: 70)
        record.notification.transaction?.previousOriginalTransactionId = previous
        return record
    }

    @Test func aMigratedSubscriptionKeepsThePreviousOnesCustomer() throws {
        let input = PreparedInput(Self.input(Self.migrated(to: "sub-2", from: "sub-1")))
        #expect(input.migratedFrom == "sub-1")
        #expect(input.lockKeys == ["Sandbox/com.example.app/sub-2", "Sandbox/com.example.app/sub-1"])
        let previous = try self.state(after: Self.subscribed, customer: "user-9", bound: true)
        let plan = try self.planner.decide(
            wave: [input],
            loads: [
                InputLoad(
                    state: SubjectState(),
                    previous: PreviousSubscription(
                        migrated: false, boundCustomer: "user-9", entitlement: previous.entitlement))
            ])
        #expect(plan.migrations.map(\.previous) == ["sub-1"] && plan.migrations[0].customer == "user-9")
        #expect(plan.facts[0].customer == "user-9")
        #expect(plan.facts[0].events.contains { $0.payload.contains("entitlement.migrated") })
    }

    @Test func aMigrationRecordedBeforeMovesNothingAgain() throws {
        let plan = try self.decide(
            Self.input(Self.migrated(to: "sub-2", from: "sub-1")),
            InputLoad(
                state: SubjectState(),
                previous: PreviousSubscription(migrated: true, boundCustomer: "user-9", entitlement: nil)))
        #expect(plan.migrations.isEmpty)
        #expect(plan.facts[0].customer == "sub-2")
    }

    @Test func anAppsPostNeverMigratesASubscription() {
        let input = PreparedInput(Self.claim(Self.migrated(to: "sub-2", from: "sub-1"), user: "user-1"))
        #expect(input.migratedFrom == nil, "only what Apple sent names a previous subscription")
        #expect(input.lockKeys == ["Sandbox/com.example.app/sub-2"])
    }
}
