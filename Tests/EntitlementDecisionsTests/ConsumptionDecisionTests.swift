import AppStoreModels
import EntitlementDecisions
import PipelineRecords
import TestSupport
import Testing

/// How a first CONSUMPTION_REQUEST is answered, decided without a database: an answer only inside the 12-hour
/// window, for a purchased (not assigned) transaction, with a policy and the customer's consent.
@Suite struct ConsumptionDecisionTests {
    static let request = VerifiedRecords.step("CONSUMPTION_REQUEST", original: "sub-1", day: 3, expiresDay: 30)
    static let entry = PreparedInput(EntitlementInput(.notification(Self.request), receivedAt: nil)).entry
    static let signed = Self.entry.signedDate

    /// The decision for the test request with `facts` consented or not, `policy`, at `now`.
    static func decide(
        consented: Bool = true, policy: ConsumptionPolicy? = ConsumptionPolicy(refundPreference: "DECLINE"),
        now: Int64 = Self.signed + 1_000, ownership: InAppOwnershipType = .purchased
    ) -> ConsumptionDecision {
        var facts = ConsumptionFacts()
        facts.customerConsented = consented
        var transaction = Self.request.notification.transaction!
        transaction.inAppOwnershipType = ownership
        return ConsumptionDecision(
            entry: Self.entry, transaction: transaction, transactionId: transaction.transactionId!, original: "sub-1",
            facts: facts, policy: policy, now: now)
    }

    @Test func aConsentedRequestWithAPolicyIsAnsweredBeforeItsDeadline() throws {
        let decision = Self.decide()
        #expect(decision.status == "pending" && decision.detail == nil)
        let answer = try #require(decision.answer)
        #expect(answer.deadline == Self.signed + 12 * 3_600_000, "12 hours after Apple signed the request")
        #expect(answer.apiVersion == "v2" && answer.v2 != nil && answer.v1 == nil)
        #expect(answer.key == "Sandbox/com.example.app/sub-1" && answer.notificationUUID == Self.entry.id)
    }

    @Test func noAnswerGoesOutWithoutConsentPolicyOrTimeOrForAnAssignedTransaction() {
        let cases: [(ConsumptionDecision, String)] = [
            (Self.decide(consented: false), "not-consented"),
            (Self.decide(policy: nil), "no-policy"),
            (Self.decide(now: Self.signed + 12 * 3_600_000), "late"),
            (Self.decide(ownership: .assigned), "not-supported"),
        ]
        for (decision, status) in cases {
            #expect(decision.status == status && decision.answer == nil && decision.detail != nil, "\(status)")
        }
    }
}
