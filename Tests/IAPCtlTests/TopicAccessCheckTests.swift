import PipelineRecords
import Testing

/// The check the end-to-end runs make of each service's Kafka use against the topic-access table: what refund-resolver
/// really does passes today's table and fails the ACL it had before (no Write on the verified topic).
@Suite struct TopicAccessCheckTests {
    let topics = PipelineTopics()

    /// What refund-resolver does in a run with ambiguous refunds: answers to verified, retries, dead letters.
    var refundResolverUse: TopicAccess.ObservedUse {
        TopicAccess.ObservedUse(
            produced: [self.topics.verified, self.topics.statusRetry, self.topics.rejected],
            consumed: [
                .init(self.topics.statusRequests, group: "refund-resolver"),
                .init(self.topics.statusRetry, group: "refund-resolver-retry"),
            ])
    }

    @Test func whatRefundResolverDoesIsWithinTheTable() throws {
        let row = try #require(self.topics.access.first { $0.principal == "refund-resolver" })
        #expect(row.violations(of: self.refundResolverUse).isEmpty)
    }

    @Test func theOldRefundResolverACLFailsIt() throws {
        var row = try #require(self.topics.access.first { $0.principal == "refund-resolver" })
        row.grants.removeAll { $0.topic == self.topics.verified }
        #expect(
            row.violations(of: self.refundResolverUse) == [
                "refund-resolver produced to appstore.notifications.verified without a Write grant"
            ])
    }

    @Test func aTopicOrGroupNobodyGrantedIsReported() throws {
        let row = try #require(self.topics.access.first { $0.principal == "customer-api" })
        let use = TopicAccess.ObservedUse(
            produced: [self.topics.entitlementChanges], consumed: [.init(self.topics.verified, group: "customer-api")])
        #expect(
            row.violations(of: use) == [
                "customer-api produced to entitlements.changes without a Write grant",
                "customer-api consumed appstore.notifications.verified without a Read grant",
                "customer-api consumed in group customer-api without a grant on it",
            ])
    }

    @Test func prefixGrantsCoverTheTopicsAndGroupsTheyName() throws {
        let row = try #require(self.topics.access.first { $0.principal == "pipeline-operator" })
        let use = TopicAccess.ObservedUse(
            produced: [self.topics.raw, self.topics.verified],
            consumed: [.init(self.topics.rejected, group: "iapctl-replay")])
        #expect(row.violations(of: use).isEmpty)
        #expect(!row.violations(of: .init(produced: [self.topics.entitlementChanges])).isEmpty)
    }
}
