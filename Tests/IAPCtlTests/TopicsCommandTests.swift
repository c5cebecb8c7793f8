import Foundation
import NotificationPipeline
import PipelineRecords
import TestSupport
import Testing

@testable import IAPCtl

/// `iapctl topics` plans every pipeline topic, with per-topic overrides, replication and retention.
@Suite struct TopicsCommandTests {
    @Test func everyPipelineTopicWithTheChosenPartitionsReplicationAndRetention() throws {
        let plan = try TopicsCommand.parse(["--bootstrap-servers", "b:9092", "--partitions", "12"]).plan()
        #expect(plan.map(\.name) == PipelineTopics().all)
        #expect(plan.allSatisfy { $0.partitions == 12 && $0.replicationFactor == 3 })
        #expect(plan.allSatisfy { $0.configuration["min.insync.replicas"] == "2" })
        let retention = Dictionary(uniqueKeysWithValues: plan.map { ($0.name, $0.configuration["retention.ms"]) })
        #expect(retention["appstore.notifications.verified"] == "-1")
        #expect(retention["appstore.notifications.raw"] == String(30 * 86_400_000))
        #expect(retention["entitlements.changes"] == String(7 * 86_400_000))
    }

    @Test func aOneBrokerClusterGetsOneCopyAndAMinimumOfOne() throws {
        let plan = try TopicsCommand.parse(["--replication-factor", "1"]).plan()
        #expect(plan.allSatisfy { $0.replicationFactor == 1 && $0.configuration["min.insync.replicas"] == "1" })
        #expect(throws: (any Error).self) { try TopicsCommand.parse(["--replication-factor", "0"]).plan() }
    }

    @Test func overridesAndExtras() throws {
        let plan = try TopicsCommand.parse(
            ["--bootstrap-servers", "b:9092", "--topic", "appstore.notifications.raw:24", "--topic", "extra"]).plan()
        #expect(plan.first { $0.name == "appstore.notifications.raw" }?.partitions == 24)
        #expect(plan.first { $0.name == "extra" }?.partitions == 6)
        #expect(plan.first { $0.name == "extra" }?.configuration["retention.ms"] == String(7 * 86_400_000))
        #expect(throws: (any Error).self) {
            try TopicsCommand.parse(["--bootstrap-servers", "b", "--topic", "x:0"]).plan()
        }
    }
}

/// The Strimzi `KafkaTopic` resources in deploy/kubernetes/components/strimzi/topics.yaml are exactly what
/// `iapctl topics --partitions 12 --print-kafka-topics appstore-kafka` prints: one policy, two ways to apply it.
@Suite struct StrimziResourcesTests {
    @Test func theCommittedKafkaTopicsAreTheCommandsOutput() throws {
        let command = try TopicsCommand.parse(["--partitions", "12", "--print-kafka-topics", "appstore-kafka"])
        let expected = TopicsCommand.kafkaTopicResources(try command.plan(), cluster: "appstore-kafka")
        #expect(
            try Self.committed("topics.yaml") == expected,
            "regenerate: iapctl topics --partitions 12 --print-kafka-topics appstore-kafka > deploy/kubernetes/components/strimzi/topics.yaml"
        )
        #expect(expected.contains("retention.ms: \"-1\""))
        #expect(expected.components(separatedBy: "kind: KafkaTopic").count - 1 == PipelineTopics().all.count)
    }

    /// A committed file of deploy/kubernetes/components/strimzi/.
    static func committed(_ name: String) throws -> String {
        try String(
            contentsOf: LocalComponents.repositoryRoot.appending(path: "deploy/kubernetes/components/strimzi/" + name),
            encoding: .utf8)
    }
}

/// The Strimzi `KafkaUser`s in deploy/kubernetes/components/strimzi/users.yaml are exactly what
/// `iapctl topics --print-kafka-users appstore-kafka` prints from the topic-access table.
@Suite struct StrimziUsersTests {
    @Test func theCommittedKafkaUsersAreTheTablesOutput() throws {
        let expected = TopicsCommand.kafkaUserResources(PipelineTopics().access, cluster: "appstore-kafka")
        #expect(
            try StrimziResourcesTests.committed("users.yaml") == expected,
            "regenerate: iapctl topics --print-kafka-users appstore-kafka > deploy/kubernetes/components/strimzi/users.yaml"
        )
    }

    /// The network policy's Kafka egress names exactly the table's workloads (the migrate Job reaches no broker).
    @Test func theCommittedKafkaEgressIsTheTablesOutput() throws {
        let expected = TopicsCommand.kafkaEgressPolicy(PipelineTopics().access)
        let committed = try String(
            contentsOf: LocalComponents.repositoryRoot.appending(
                path: "deploy/kubernetes/base/network-policy-kafka.yaml"),
            encoding: .utf8)
        #expect(
            committed == expected,
            "regenerate: iapctl topics --print-kafka-egress > deploy/kubernetes/base/network-policy-kafka.yaml")
        #expect(!expected.contains("pipeline-migrate") && expected.contains("\"refund-resolver\""))
    }

    /// What the services write and read today, as their code does it (the table must grant each).
    @Test func theTableGrantsWhatTheServicesDo() {
        let topics = PipelineTopics()
        let access = Dictionary(uniqueKeysWithValues: topics.access.map { ($0.principal, $0) })
        func may(_ principal: String, _ use: TopicAccess.Use, _ topic: String) -> Bool {
            access[principal]?.grants.contains {
                $0.uses.contains(use) && ($0.prefix ? topic.hasPrefix($0.topic) : topic == $0.topic)
            } ?? false
        }
        // refund-resolver's status snapshots and consumption outcomes go to verified (VerifiedTopicRecords).
        #expect(may("refund-resolver", .produce, topics.verified))
        // customer-api's console replays a chain-verifier dead letter to raw, a resolver's to status requests.
        #expect(may("customer-api", .produce, topics.raw) && may("customer-api", .produce, topics.statusRequests))
        // `iapctl topics` creates every topic.
        #expect(topics.all.allSatisfy { may("pipeline-operator", .create, $0) })
        // Only the chain-verifier, customer-api, refund-resolver and the operator write verified records.
        #expect(
            Set(topics.access.filter { may($0.principal, .produce, topics.verified) }.map(\.principal)) == [
                "chain-verifier", "customer-api", "refund-resolver", "pipeline-operator",
            ])
        #expect(!may("customer-api", .consume, topics.verified), "the internet-facing API reads no topic")
    }
}
