import CRdKafka
import Dispatch
import Foundation
import Logging
import Synchronization

/// A consumer-group member with at-least-once semantics: the application stores an offset only after
/// the message's effect is durable, and librdkafka commits stored offsets in the background and on
/// rebalance. Partitions are assigned and revoked by librdkafka itself (classic protocol, no callback). A record that
/// comes after a gap in its partition's offsets is held back and the partition read again (``OffsetGapGuard``).
///
/// Every blocking call runs on the consumer's own serial queue, never on the cooperative pool.
public final class KafkaConsumer: Sendable {
    let client: RdKafkaClient
    private let logger: Logger
    private let queue: DispatchQueue
    /// The consumer group, for the process's ``KafkaTraffic``.
    private let groupID: String
    /// The offset stored last per partition: where this member's durable work ends (for ``assignment()``'s lags).
    private let stored = Mutex<[PartitionKey: Int64]>([:])
    /// Reads a partition again when a record comes after a gap (``OffsetGapGuard``); used on the consumer's queue only,
    /// where it may wait for the broker, so nothing else ever waits for its lock.
    private let gapGuard = Mutex(OffsetGapGuard())
    /// The guard's counts as of its last decision about a gap, for ``gapCounts`` (read from tasks, never held long).
    private let publishedGapCounts = Mutex(GapCounts())

    /// How often this member met a record after a gap, and how those gaps ended.
    public struct GapCounts: Sendable, Hashable {
        /// Gaps met (each one read again from its first missing offset).
        public var seen = 0
        /// Gaps whose records arrived once read again.
        public var filled = 0
        /// Gaps accepted after lasting the confirmation time: records this member never saw.
        public var accepted = 0

        /// Creates counts (tests and tools; members count their own in ``KafkaConsumer/gapCounts``).
        public init(seen: Int = 0, filled: Int = 0, accepted: Int = 0) {
            self.seen = seen
            self.filled = filled
            self.accepted = accepted
        }
    }

    /// The gaps this member has met so far.
    public var gapCounts: GapCounts { self.publishedGapCounts.withLock { $0 } }

    /// A topic and partition.
    struct PartitionKey: Hashable, Sendable {
        var topic: String
        var partition: Int32
    }

    /// How far one assigned partition's durable work is behind its end.
    public struct PartitionLag: Sendable, Hashable {
        public var topic: String
        public var partition: Int32
        /// Messages between the offset this member stored last (or its fetch position before it stored any) and
        /// the partition's end as its last fetch saw it.
        public var messages: Int64

        /// Creates a lag (tests and tools; members report their own with ``KafkaConsumer/assignment()``).
        public init(topic: String, partition: Int32, messages: Int64) {
            self.topic = topic
            self.partition = partition
            self.messages = messages
        }
    }

    /// Creates the member and subscribes to the configured topics.
    public init(configuration: KafkaConsumerConfiguration, logger: Logger) throws(KafkaError) {
        self.logger = logger
        self.client = try RdKafkaClient(
            type: RD_KAFKA_CONSUMER, properties: configuration.librdkafkaProperties, logger: logger)
        self.queue = DispatchQueue(label: "kafka-consumer-\(configuration.groupID)")
        self.groupID = configuration.groupID
        rd_kafka_poll_set_consumer(self.client.handle)
        let list = rd_kafka_topic_partition_list_new(Int32(configuration.topics.count))
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for topic in configuration.topics {
            rd_kafka_topic_partition_list_add(list, topic, RD_KAFKA_PARTITION_UA)
        }
        let result = rd_kafka_subscribe(self.client.handle, list)
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(.consume, "subscribe to \(configuration.topics)", responseError: result)
        }
    }

    // MARK: Polling

    /// Waits up to `timeout` for a first message, then takes whatever else is ready, up to `maxMessages`; with a
    /// `linger`, it keeps taking messages as they arrive until `linger` after the first (bigger batches for a
    /// handler whose cost is per batch, at up to `linger` more latency).
    ///
    /// Error events are logged and skipped unless fatal, which throws.
    public func poll(maxMessages: Int, timeout: Duration, linger: Duration = .zero) async throws(KafkaError)
        -> [ConsumerRecord]
    {
        let client = self.client
        let logger = self.logger
        let result: Result<[ConsumerRecord], KafkaError> = await withCheckedContinuation { continuation in
            self.queue.async {
                let handle = client.handle
                var records: [ConsumerRecord] = []
                var wait = Int32(clamping: timeout.milliseconds)
                var lingerEnd: ContinuousClock.Instant?
                while records.count < maxMessages {
                    guard let message = rd_kafka_consumer_poll(handle, wait) else {
                        guard let end = lingerEnd, ContinuousClock.now < end else { break }
                        wait = Int32(clamping: max(1, (end - ContinuousClock.now).milliseconds))
                        continue
                    }
                    defer { rd_kafka_message_destroy(message) }
                    if lingerEnd == nil { lingerEnd = ContinuousClock.now + linger }
                    wait = Int32(clamping: max(0, (lingerEnd! - ContinuousClock.now).milliseconds))
                    let error = message.pointee.err
                    if error == RD_KAFKA_RESP_ERR_NO_ERROR {
                        let record = ConsumerRecord(message: message)
                        if self.passesGapGuard(record) { records.append(record) }
                    } else if error == RD_KAFKA_RESP_ERR__FATAL {
                        continuation.resume(returning: .failure(KafkaError(.consume, "consumer", responseError: error)))
                        return
                    } else if error != RD_KAFKA_RESP_ERR__PARTITION_EOF {
                        logger.warning(
                            "kafka consumer error", metadata: ["error": "\(String(cString: rd_kafka_err2str(error)))"])
                    }
                }
                continuation.resume(returning: .success(records))
            }
        }
        let records = try result.get()
        KafkaTraffic.process.consumed(records, group: self.groupID)
        return records
    }

    // MARK: Gaps

    /// Whether a message may be handed on: a message after a gap is dropped and its partition read again from the
    /// offset that is missing (``OffsetGapGuard``). Runs on the consumer's queue (it may wait there for the broker).
    private func passesGapGuard(_ record: ConsumerRecord) -> Bool {
        let topic = record.topic
        let partition = OffsetGapGuard.Partition(topic: topic, partition: record.partition)
        let offset = record.offset
        let (verdict, counts) = self.gapGuard.withLock { gapGuard in
            let verdict = gapGuard.observe(partition, offset: offset, at: .now) { self.readingStart(of: partition) }
            return (verdict, gapGuard.counts)
        }
        if verdict != .deliver { self.publishedGapCounts.withLock { $0 = counts } }
        let metadata: (Range<Int64>) -> Logger.Metadata = { missing in
            [
                "topic": "\(topic)", "partition": "\(partition.partition)", "group": "\(self.groupID)",
                "missing": "\(missing.lowerBound)..<\(missing.upperBound)",
            ]
        }
        switch verdict {
        case .deliver:
            return true
        case .deliverArrived(let missing):
            self.logger.notice(
                "the missing records arrived once the partition was read again", metadata: metadata(missing))
            return true
        case .deliverAfterGap(let missing):
            self.logger.error(
                "records missing from the partition for good; consuming on after them", metadata: metadata(missing))
            return true
        case .readAgain(let start, let missing, let firstSighting):
            if firstSighting {
                self.logger.warning(
                    "a record came after a gap; reading the partition again from the first missing offset",
                    metadata: metadata(missing))
            } else {
                // Confirming a gap: not a busy loop against the broker.
                Thread.sleep(forTimeInterval: 0.02)
            }
            self.seek(partition, to: start)
            return false
        }
    }

    /// Where the group's reading of a partition starts: its committed offset, or the log's first offset when the group
    /// committed none (`auto.offset.reset=earliest`); nil when neither is known. The committed offset is one round trip
    /// to the group's coordinator (2 s limit); the log's first offset is the one the last fetch response gave
    /// (`rd_kafka_get_watermark_offsets`, no round trip: asking the broker, `rd_kafka_query_watermark_offsets`, took
    /// 500 ms on Tansu, and with a fresh group that was paid for every partition's first record).
    private func readingStart(of partition: OffsetGapGuard.Partition) -> Int64? {
        let list = rd_kafka_topic_partition_list_new(1)!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        rd_kafka_topic_partition_list_add(list, partition.topic, partition.partition)
        guard rd_kafka_committed(self.client.handle, list, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        let element = list.pointee.elems[0]
        guard element.err == RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        if element.offset >= 0 { return element.offset }
        var low: Int64 = 0
        var high: Int64 = 0
        let watermarks = rd_kafka_get_watermark_offsets(
            self.client.handle, partition.topic, partition.partition, &low, &high)
        return watermarks == RD_KAFKA_RESP_ERR_NO_ERROR && low >= 0 ? low : nil
    }

    /// Moves a partition's fetch position (librdkafka drops what it had fetched past it).
    private func seek(_ partition: OffsetGapGuard.Partition, to offset: Int64) {
        let list = rd_kafka_topic_partition_list_new(1)!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        rd_kafka_topic_partition_list_add(list, partition.topic, partition.partition).pointee.offset = offset
        if let error = rd_kafka_seek_partitions(self.client.handle, list, 2000) {
            self.logger.warning(
                "kafka seek failed", metadata: ["error": "\(String(cString: rd_kafka_error_string(error)))"])
            rd_kafka_error_destroy(error)
        }
    }

    // MARK: Offsets

    /// Marks records as processed: per partition, the offset after the highest one is stored for commit.
    ///
    /// A partition this member no longer owns (revoked by a rebalance) is skipped: its new owner will see
    /// those messages again, which at-least-once allows.
    public func storeOffsets(after records: [ConsumerRecord]) {
        var next: [String: [Int32: Int64]] = [:]
        for record in records {
            next[record.topic, default: [:]][record.partition] = max(
                next[record.topic]?[record.partition] ?? 0, record.offset + 1)
        }
        guard !next.isEmpty else { return }
        let list = rd_kafka_topic_partition_list_new(Int32(records.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for (topic, partitions) in next {
            for (partition, offset) in partitions {
                rd_kafka_topic_partition_list_add(list, topic, partition).pointee.offset = offset
            }
        }
        self.stored.withLock { stored in
            for (topic, partitions) in next {
                for (partition, offset) in partitions {
                    stored[PartitionKey(topic: topic, partition: partition)] = offset
                }
            }
        }
        let result = rd_kafka_offsets_store(self.client.handle, list)
        if result != RD_KAFKA_RESP_ERR_NO_ERROR {
            self.logger.info(
                "offsets not stored for partitions no longer assigned",
                metadata: ["error": "\(String(cString: rd_kafka_err2str(result)))"])
        }
    }

    /// The offset this member stored last per partition.
    func storedOffsets() -> [PartitionKey: Int64] { self.stored.withLock { $0 } }

    // MARK: Lag

    /// The partitions this member holds now, and the lag of each whose lag is known.
    public struct Assignment: Sendable, Hashable {
        /// How many partitions it holds (0 until it has joined its group and been given some, and for a member
        /// beyond the partition count).
        public var partitions: Int
        /// The lag of each, from librdkafka's cached high watermarks. Partitions whose end or position is not known
        /// yet are left out.
        public var lags: [PartitionLag]

        /// Creates an assignment (tests and tools; members report their own with ``KafkaConsumer/assignment()``).
        public init(partitions: Int, lags: [PartitionLag]) {
            self.partitions = partitions
            self.lags = lags
        }
    }

    /// The partitions assigned to this member and their lags, from one look at the assignment and librdkafka's
    /// cached high watermarks (no broker request: it is cheap enough to call after every batch).
    public func assignment() -> Assignment {
        let handle = self.client.handle
        var assignment: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        guard rd_kafka_assignment(handle, &assignment) == RD_KAFKA_RESP_ERR_NO_ERROR, let list = assignment else {
            return Assignment(partitions: 0, lags: [])
        }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        _ = rd_kafka_position(handle, list)
        let stored = self.storedOffsets()
        var lags: [PartitionLag] = []
        for index in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[index]
            let topic = String(cString: element.topic)
            var low: Int64 = -1
            var high: Int64 = -1
            guard
                rd_kafka_get_watermark_offsets(handle, topic, element.partition, &low, &high)
                    == RD_KAFKA_RESP_ERR_NO_ERROR, high >= 0
            else { continue }
            let done = stored[PartitionKey(topic: topic, partition: element.partition)] ?? element.offset
            guard done >= 0 else { continue }
            lags.append(PartitionLag(topic: topic, partition: element.partition, messages: max(0, high - done)))
        }
        return Assignment(partitions: Int(list.pointee.cnt), lags: lags)
    }

    // MARK: Closing

    /// Commits stored offsets and leaves the group, so partitions move to other members at once.
    ///
    /// librdkafka's close waits for the broker without limit; when the broker is gone it never returns. After
    /// `timeout` the member stops waiting: nothing is lost (unstored offsets are simply consumed again) and the
    /// group's session timeout hands the partitions on. Returns whether librdkafka finished closing.
    @discardableResult
    public func close(timeout: Duration = .seconds(10)) async -> Bool {
        let client = self.client
        let logger = self.logger
        let resume = ResumeOnce()
        return await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            resume.arm(done)
            self.queue.async {
                let result = rd_kafka_consumer_close(client.handle)
                if result != RD_KAFKA_RESP_ERR_NO_ERROR {
                    logger.warning(
                        "kafka consumer close", metadata: ["error": "\(String(cString: rd_kafka_err2str(result)))"])
                }
                resume.fire(with: true)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeout.milliseconds))) {
                if resume.fire(with: false) {
                    logger.warning(
                        "kafka consumer close did not finish in time (broker unreachable?); leaving without it",
                        metadata: ["timeout": "\(timeout)"])
                }
            }
        }
    }
}

/// Resumes a continuation exactly once with the value of whichever of two racing paths gets there first.
private final class ResumeOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Bool, Never>?

    /// Stores the continuation to resume.
    func arm(_ continuation: CheckedContinuation<Bool, Never>) {
        self.lock.withLock { self.continuation = continuation }
    }

    /// Resumes it with `value` if nobody has; returns whether this call did.
    @discardableResult
    func fire(with value: Bool) -> Bool {
        let continuation = self.lock.withLock { () -> CheckedContinuation<Bool, Never>? in
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume(returning: value)
        return continuation != nil
    }
}

// MARK: - ConsumerRecord + librdkafka message

extension ConsumerRecord {
    /// Copies a message out of librdkafka (the caller destroys the message).
    init(message: UnsafeMutablePointer<rd_kafka_message_t>) {
        let m = message.pointee
        var headers: [KafkaHeader] = []
        var headerList: OpaquePointer?
        if rd_kafka_message_headers(message, &headerList) == RD_KAFKA_RESP_ERR_NO_ERROR, let headerList {
            var index = 0
            var name: UnsafePointer<CChar>?
            var value: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(headerList, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                headers.append(
                    KafkaHeader(
                        name: name.map { String(cString: $0) } ?? "",
                        value: value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }))
                index += 1
            }
        }
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(message, &timestampType)
        self.init(
            topic: String(cString: rd_kafka_topic_name(m.rkt)), partition: m.partition, offset: m.offset,
            key: m.key.map { Array(UnsafeRawBufferPointer(start: $0, count: m.key_len)) },
            value: m.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: m.len)) },
            headers: headers, timestamp: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp)
    }
}
