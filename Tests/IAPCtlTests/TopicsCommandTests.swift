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
        let committed = try String(
            contentsOf: LocalComponents.repositoryRoot.appending(
                path: "deploy/kubernetes/components/strimzi/topics.yaml"),
            encoding: .utf8)
        #expect(
            committed == expected,
            "regenerate: iapctl topics --partitions 12 --print-kafka-topics appstore-kafka > deploy/kubernetes/components/strimzi/topics.yaml"
        )
        #expect(expected.contains("retention.ms: \"-1\""))
        #expect(expected.components(separatedBy: "kind: KafkaTopic").count - 1 == PipelineTopics().all.count)
    }
}
