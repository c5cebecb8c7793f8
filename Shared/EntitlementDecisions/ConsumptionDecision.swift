public import AppStoreModels
import Entitlements
public import PipelineRecords

/// How a CONSUMPTION_REQUEST recorded for the first time is answered: its status, and the answer refund-resolver
/// sends Apple when the policy, the customer's consent and the 12-hour window allow one. Storage records the request
/// and loads the facts; this decides.
public struct ConsumptionDecision: Hashable, Sendable {
    /// `pending` (an answer goes out), `late`, `not-supported`, `no-policy` or `not-consented`.
    public var status: String
    /// The answer for refund-resolver, when one goes out.
    public var answer: ConsumptionAnswer?
    /// Why no answer goes out, in words, for the request's row.
    public var detail: String?

    /// Decides the request `entry` about `transaction` (its id `transactionId`, its subscription `original`) from the
    /// facts stored about the customer and purchase; `now` and the deadline are epoch ms. An assigned transaction
    /// (API 1.22) gets no answer: Apple refuses consumption information for it (4000227).
    public init(
        entry: NotificationLogEntry, transaction: JWSTransactionDecodedPayload, transactionId: String, original: String,
        facts: ConsumptionFacts, policy: ConsumptionPolicy?, now: Int64
    ) {
        let deadline = Self.deadline(of: entry)
        self.answer = nil
        if now >= deadline {
            self.status = "late"
            self.detail = "arrived after its 12-hour window had closed"
        } else if transaction.inAppOwnershipType == .assigned {
            self.status = "not-supported"
            self.detail = "an assigned transaction: Apple takes no consumption information for it (4000227)"
        } else if let policy {
            if facts.consented {
                self.status = "pending"
                self.detail = nil
                self.answer = ConsumptionAnswer(
                    transactionId: transactionId, originalTransactionId: original, environment: entry.environment,
                    bundleId: entry.bundleId, notificationUUID: entry.id, deadline: deadline,
                    apiVersion: policy.apiVersion,
                    v2: policy.apiVersion == "v2" ? facts.answerV2(policy) : nil,
                    v1: policy.apiVersion == "v1" ? facts.answerV1(policy, now: now) : nil)
            } else {
                self.status = "not-consented"
                self.detail = "no consent recorded in consumption_facts"
            }
        } else {
            self.status = "no-policy"
            self.detail = "CONSUMPTION_POLICY is not set"
        }
    }

    /// When the request's answer window closes (epoch ms): 12 hours after Apple signed it.
    public static func deadline(of entry: NotificationLogEntry) -> Int64 {
        entry.signedDate + EntitlementRules.consumptionAnswerWindow
    }
}

extension ConsumptionAnswer {
    /// The outbox key of an answer: the purchase within its environment and app, like its events and status
    /// requests (so refund-resolver sends it in order with them).
    public var key: String {
        EntitlementEvent.key(
            environment: self.environment, bundleId: self.bundleId, customer: self.originalTransactionId)
    }
}
