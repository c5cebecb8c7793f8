import CRdKafka
import Dispatch
import Foundation

// MARK: - How far the group has handled its topics

extension KafkaConsumer {
    /// Whether every record that these topics held when the call began has been handled by some member of this
    /// consumer group, asked of the brokers now (not from librdkafka's caches, which a stalled broker leaves stale).
    ///
    /// The partitions' ends are read first (ListOffsets, "latest"); then, per partition, how far the group handled
    /// it: the largest of the group's committed offset (OffsetFetch), the offset this member stored last, and the
    /// partition's first offset (records retention deleted are nobody's to handle). A member stores an offset only
    /// once its handler's effect is durable, and the group commits only stored offsets, so a partition handled up to
    /// the end read before has nothing unhandled from before the call. Any request that fails or times out throws:
    /// nothing is assumed.
    ///
    /// Costs one metadata request, two ListOffsets requests per partition leader and one OffsetFetch; the blocking
    /// calls run on a queue of their own, never on the cooperative pool nor behind
    /// ``poll(maxMessages:timeout:linger:)``.
    public func groupHasHandledEverything(in topics: [String], timeout: Duration) async throws(KafkaError) -> Bool {
        let client = self.client
        let milliseconds = Int32(clamping: timeout.milliseconds)
        let result: Result<Bool, KafkaError> = await withCheckedContinuation { continuation in
            Self.progressQueue.async {
                continuation.resume(
                    returning: Result { () throws(KafkaError) in
                        let handle = client.handle
                        let partitions = try Self.partitions(of: topics, handle: handle, timeout: milliseconds)
                        let ends = try Self.offsets(partitions, at: Int64(RD_KAFKA_OFFSET_END), what: "end offsets") {
                            rd_kafka_offsets_for_times(handle, $0, milliseconds)
                        }
                        // Read after the ends: what is handled only grows, so a later reading can only be larger.
                        let starts = try Self.offsets(
                            partitions, at: Int64(RD_KAFKA_OFFSET_BEGINNING), what: "first offsets"
                        ) { rd_kafka_offsets_for_times(handle, $0, milliseconds) }
                        let committed = try Self.offsets(partitions, at: 0, what: "committed offsets") {
                            rd_kafka_committed(handle, $0, milliseconds)
                        }
                        return Self.hasHandled(
                            ends: ends, handled: [starts, committed, self.storedOffsets()])
                    })
            }
        }
        return try result.get()
    }

    /// Whether each partition's handled offset (the largest any reading gives it) has reached its end.
    static func hasHandled(ends: [PartitionKey: Int64], handled readings: [[PartitionKey: Int64]]) -> Bool {
        ends.allSatisfy { partition, end in
            readings.contains { ($0[partition] ?? Int64.min) >= end }
        }
    }

    /// The blocking calls of ``groupHasHandledEverything(in:timeout:)``, one at a time, off the cooperative pool.
    private static let progressQueue = DispatchQueue(label: "kafka-consumer-group-progress")

    /// Every partition of the topics, from a metadata request; throws when a topic is unknown or has none.
    private static func partitions(of topics: [String], handle: OpaquePointer, timeout: Int32) throws(KafkaError)
        -> [PartitionKey]
    {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(handle, 0, nil, &metadata, timeout)
        defer { if let metadata { rd_kafka_metadata_destroy(metadata) } }
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError(.consume, "metadata of \(topics)", responseError: error)
        }
        var partitions: [PartitionKey] = []
        for topic in topics {
            let known = (0..<Int(metadata.pointee.topic_cnt)).map { metadata.pointee.topics[$0] }
            guard let entry = known.first(where: { String(cString: $0.topic) == topic }), entry.partition_cnt > 0,
                entry.err == RD_KAFKA_RESP_ERR_NO_ERROR
            else {
                throw KafkaError(.consume, "no partitions known for \(topic)")
            }
            for index in 0..<Int(entry.partition_cnt) {
                partitions.append(PartitionKey(topic: topic, partition: entry.partitions[index].id))
            }
        }
        return partitions
    }

    /// One offset per partition from a blocking librdkafka request that fills a partition list whose offsets were
    /// set to `initial` (for ListOffsets, the special "latest" or "earliest"); throws when the request or any
    /// partition failed.
    private static func offsets(
        _ partitions: [PartitionKey], at initial: Int64, what: String,
        request: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> rd_kafka_resp_err_t
    ) throws(KafkaError) -> [PartitionKey: Int64] {
        let list = rd_kafka_topic_partition_list_new(Int32(partitions.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for partition in partitions {
            rd_kafka_topic_partition_list_add(list, partition.topic, partition.partition).pointee.offset = initial
        }
        let error = request(list)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(.consume, what, responseError: error) }
        var offsets: [PartitionKey: Int64] = [:]
        for index in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[index]
            guard element.err == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError(.consume, "\(what) of \(String(cString: element.topic))", responseError: element.err)
            }
            offsets[PartitionKey(topic: String(cString: element.topic), partition: element.partition)] =
                element.offset
        }
        return offsets
    }
}
