import Foundation
import Logging
import RdKafka
import TestSupport
import Testing

/// ``KafkaConsumer/groupHasHandledEverything(in:timeout:)`` against a real broker: a record counts as handled only
/// once a member stored its offset (after its effect was durable), a new record makes the group behind again, what
/// another member committed counts, an empty topic needs nothing, and a frozen broker gives no answer rather than a
/// stale yes.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct KafkaGroupProgressTests {
    let logger: Logger = {
        var logger = Logger(label: "group-progress-test")
        logger.logLevel = .error
        return logger
    }()

    func member(_ bootstrap: String, group: String, topics: [String]) throws -> KafkaConsumer {
        var configuration = KafkaConsumerConfiguration(
            client: KafkaClientSettings(bootstrapServers: [bootstrap]), groupID: group, topics: topics)
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .milliseconds(500)
        return try KafkaConsumer(configuration: configuration, logger: self.logger)
    }

    /// Polls until `count` records came (or 600 empty polls of 100 ms), without storing their offsets.
    func take(_ count: Int, from member: KafkaConsumer) async throws -> [ConsumerRecord] {
        var records: [ConsumerRecord] = []
        var empty = 0
        while records.count < count, empty < 600 {
            let batch = try await member.poll(maxMessages: count - records.count, timeout: .milliseconds(100))
            records += batch
            if batch.isEmpty { empty += 1 }
        }
        return records
    }

    func records(_ topic: String, _ range: Range<Int>) -> [ProducerRecord] {
        range.map { ProducerRecord(topic: topic, key: Array("k\($0)".utf8), value: Array("m\($0)".utf8)) }
    }

    @Test func handledMeansStoredBySomeMemberAndAFrozenBrokerGivesNoAnswer() async throws {
        try await withFreezableLocalBroker { bootstrap, pid in
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            try await kafka.createTopics([("progress-a", 2), ("progress-b", 1), ("progress-empty", 2)])
            try await kafka.produce(self.records("progress-a", 0..<6))
            let topics = ["progress-a", "progress-b"]

            let first = try self.member(bootstrap, group: "progress", topics: topics)
            #expect(
                try await !first.groupHasHandledEverything(in: topics, timeout: .seconds(10)),
                "nothing handled yet")
            let taken = try await self.take(6, from: first)
            #expect(taken.count == 6)
            #expect(
                try await !first.groupHasHandledEverything(in: topics, timeout: .seconds(10)),
                "records polled but not stored are not handled")
            first.storeOffsets(after: taken)
            #expect(
                try await first.groupHasHandledEverything(in: topics, timeout: .seconds(10)),
                "every record stored, and the other topic empty")

            try await kafka.produce(self.records("progress-b", 6..<7))
            #expect(
                try await !first.groupHasHandledEverything(in: topics, timeout: .seconds(10)),
                "a record published since makes the group behind")
            let late = try await self.take(1, from: first)
            first.storeOffsets(after: late)
            #expect(try await first.groupHasHandledEverything(in: topics, timeout: .seconds(10)))

            // What the group committed counts for a member that handled nothing itself.
            await first.close()
            let second = try self.member(bootstrap, group: "progress", topics: topics)
            #expect(
                try await second.groupHasHandledEverything(in: topics, timeout: .seconds(10)),
                "the first member's commits (made when it left) count")
            let other = try self.member(bootstrap, group: "progress-other", topics: ["progress-empty"])
            #expect(
                try await other.groupHasHandledEverything(in: ["progress-empty"], timeout: .seconds(10)),
                "an empty topic needs nothing handled")

            #expect(try await freezeProcess(pid))
            await #expect(throws: KafkaError.self, "a frozen broker gives no answer") {
                try await second.groupHasHandledEverything(in: topics, timeout: .seconds(1))
            }
            kill(pid, SIGCONT)
            await second.close()
            await other.close()
        }
    }
}
