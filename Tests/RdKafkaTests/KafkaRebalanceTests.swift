import Foundation
import Logging
import RdKafka
import TestSupport
import Testing

/// Consumer-group rebalancing against a real broker: members share partitions, and when one leaves
/// (closing, which leaves the group), the other takes over all of them without losing a message.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct KafkaRebalanceTests {
    let logger: Logger = {
        var logger = Logger(label: "rebalance-test")
        logger.logLevel = .error
        return logger
    }()

    func member(_ bootstrap: String, topic: String) throws -> KafkaConsumer {
        var configuration = KafkaConsumerConfiguration(
            client: KafkaClientSettings(bootstrapServers: [bootstrap]), groupID: "shared", topics: [topic])
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .milliseconds(500)
        return try KafkaConsumer(configuration: configuration, logger: self.logger)
    }

    /// Polls both members (processing and storing as it goes) until `total` distinct values were seen, or 600
    /// rounds of 100 ms polls (a minute on an idle machine; counted, not timed: ``Polling``) brought nothing.
    func drain(_ members: [KafkaConsumer], until total: Int, seen: inout [String: Int], perMember: inout [Int])
        async throws
    {
        var emptyRounds = 0
        while Set(seen.keys).count < total, emptyRounds < 600 {
            var arrived = 0
            for (index, member) in members.enumerated() {
                let records = try await member.poll(maxMessages: 10, timeout: .milliseconds(100))
                for record in records { seen[String(decoding: record.value ?? [], as: UTF8.self), default: 0] += 1 }
                perMember[index] += records.count
                arrived += records.count
                member.storeOffsets(after: records)
            }
            if arrived == 0 { emptyRounds += 1 }
        }
    }

    @Test func membersShareThePartitionsAndTheLastOneTakesOverAll() async throws {
        try await withLocalBroker { bootstrap in
            let topic = "shared-topic"
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            try await kafka.createTopics([(topic, 4)])
            try await kafka.produce(
                (0..<80).map { ProducerRecord(topic: topic, key: Array("k\($0)".utf8), value: Array("m\($0)".utf8)) })

            let first = try member(bootstrap, topic: topic)
            let second = try member(bootstrap, topic: topic)
            var seen: [String: Int] = [:]
            var perMember = [0, 0]
            try await drain([first, second], until: 80, seen: &seen, perMember: &perMember)
            #expect(Set(seen.keys).count == 80)
            #expect(perMember[0] > 0 && perMember[1] > 0, "both members were assigned partitions: \(perMember)")

            await first.close()  // leaves the group: the second member must get every partition
            try await kafka.produce(
                (80..<120).map { ProducerRecord(topic: topic, key: Array("k\($0)".utf8), value: Array("m\($0)".utf8)) })
            var after: [String: Int] = [:]
            var afterCount = [0]
            try await drain([second], until: 40, seen: &after, perMember: &afterCount)
            await second.close()
            let late = Set(after.keys).filter { Int($0.dropFirst())! >= 80 }
            #expect(late.count == 40, "the remaining member received every new message")
        }
    }
}
