import NotificationPipeline
import PipelineRecords
import Testing

@testable import IAPCtl

/// `iapctl topics` plans every pipeline topic, with per-topic overrides.
@Suite struct TopicsCommandTests {
    @Test func everyPipelineTopicWithTheChosenPartitions() throws {
        let plan = try TopicsCommand.parse(["--bootstrap-servers", "b:9092", "--partitions", "12"]).plan()
        #expect(plan.map(\.name) == PipelineTopics().all)
        #expect(plan.allSatisfy { $0.partitions == 12 })
    }

    @Test func overridesAndExtras() throws {
        let plan = try TopicsCommand.parse(
            ["--bootstrap-servers", "b:9092", "--topic", "appstore.notifications.raw:24", "--topic", "extra"]).plan()
        #expect(plan.first { $0.name == "appstore.notifications.raw" }?.partitions == 24)
        #expect(plan.first { $0.name == "extra" }?.partitions == 6)
        #expect(throws: (any Error).self) {
            try TopicsCommand.parse(["--bootstrap-servers", "b", "--topic", "x:0"]).plan()
        }
    }
}
