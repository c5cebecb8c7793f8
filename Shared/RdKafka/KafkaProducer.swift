import CRdKafka
import Foundation
import Logging
public import ServiceLifecycle
import Synchronization

/// An idempotent, `acks=all` producer whose `send` returns only when the broker acknowledged the message.
///
/// A dedicated thread polls delivery reports, so no task of the cooperative pool ever blocks. As a
/// `Service`, it waits for graceful shutdown, then flushes what is queued (up to the configured timeout)
/// and fails anything still pending.
public final class KafkaProducer: Service, Sendable {
    private let client: RdKafkaClient
    private let configuration: KafkaProducerConfiguration
    private let logger: Logger
    private let poller: DeliveryReportPoller
    private let lingerCutter: LingerCutter

    /// Creates the producer and starts polling delivery reports.
    public init(configuration: KafkaProducerConfiguration, logger: Logger) throws(KafkaError) {
        self.configuration = configuration
        self.logger = logger
        self.client = try RdKafkaClient(
            type: RD_KAFKA_PRODUCER, properties: configuration.librdkafkaProperties,
            events: Int32(RD_KAFKA_EVENT_DR | RD_KAFKA_EVENT_ERROR), logger: logger)
        self.poller = DeliveryReportPoller(client: self.client, logger: logger)
        self.lingerCutter = LingerCutter(client: self.client, linger: Self.effectiveLinger(configuration))
    }

    deinit {
        self.lingerCutter.stop()
        self.poller.stop()
    }

    /// The linger librdkafka was given: the configuration's, or the one `KAFKA_PROPERTIES` set (`linger.ms` may have
    /// a fraction).
    private static func effectiveLinger(_ configuration: KafkaProducerConfiguration) -> Duration {
        guard let text = configuration.librdkafkaProperties["linger.ms"], let milliseconds = Double(text) else {
            return configuration.linger
        }
        return .microseconds(Int64(milliseconds * 1000))
    }

    // MARK: Health

    /// Whether the broker is up: it acknowledged a message within `acknowledgedWithin`, or it answers a
    /// metadata request within `timeout` (librdkafka's blocking call runs on a thread of its own, never on the
    /// cooperative pool). The readiness probe of the services: under load a metadata request can queue behind
    /// thousands of messages and miss its timeout, while the acknowledgements keep coming, so a busy broker
    /// is never reported down (a pod shown not-ready for being busy pushes its load onto the others).
    public func isBrokerReachable(timeout: Duration = .seconds(1), acknowledgedWithin: Duration = .seconds(3)) async
        -> Bool
    {
        guard self.fatalError == nil else { return false }
        if self.poller.acknowledged(within: acknowledgedWithin) { return true }
        let milliseconds = Int32(clamping: timeout.milliseconds)
        let client = self.client
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var metadata: UnsafePointer<rd_kafka_metadata>?
                let error = rd_kafka_metadata(client.handle, 0, nil, &metadata, milliseconds)
                if let metadata { rd_kafka_metadata_destroy(metadata) }
                continuation.resume(returning: error == RD_KAFKA_RESP_ERR_NO_ERROR)
            }
        }
    }

    // MARK: Sending

    /// Produces a record and returns where the broker stored it, once acknowledged by all in-sync replicas.
    ///
    /// - Throws: ``KafkaError`` with code `.delivery` when the broker did not acknowledge it within the
    ///   delivery timeout, `.produce` when it could not be enqueued, `.shutdown` after shutdown;
    ///   `CancellationError` when the calling task is cancelled while waiting (the message stays in flight).
    public func send(_ record: ProducerRecord) async throws -> DeliveryReport {
        try await self.enqueue(record).report
    }

    /// Produces records in order (each partition keeps it) and returns once the broker acknowledged every one.
    public func send(_ records: [ProducerRecord]) async throws {
        var pending: [PendingDelivery] = []
        pending.reserveCapacity(records.count)
        for record in records { pending.append(try await self.enqueue(record)) }
        for delivery in pending { _ = try await delivery.report }
    }

    /// Hands a record to librdkafka and returns its pending delivery. Records enqueued one after another
    /// keep their order per partition (the producer is idempotent), so a batch can be enqueued in order and
    /// its reports awaited afterwards.
    public func enqueue(_ record: ProducerRecord) async throws(KafkaError) -> PendingDelivery {
        let promise = DeliveryPromise()
        let id = try self.poller.pending.withLock {
            (state: inout DeliveryReportPoller.Pending) throws(KafkaError) -> UInt in
            guard !state.closed else { throw KafkaError(.shutdown, "the producer is shut down") }
            defer { state.nextID += 1 }
            state.waiting[state.nextID] = promise
            return state.nextID
        }
        do {
            try await self.produce(record, id: id)
        } catch {
            _ = self.poller.pending.withLock { $0.waiting.removeValue(forKey: id) }
            throw error
        }
        return PendingDelivery(promise: promise)
    }

    /// Sends the messages librdkafka holds back for the linger without waiting for it to pass; returns at once. For a
    /// caller about to await the last of the messages it enqueued, when no more will follow for a while: a consumer
    /// service at the end of its batch, ingest for a request alone in flight. Messages enqueued meanwhile may go without
    /// lingering too.
    public func sendQueuedNow() {
        self.lingerCutter.cut()
    }

    /// Hands a message to librdkafka, waiting while its queue is full (bounded by the delivery timeout).
    private func produce(_ record: ProducerRecord, id: UInt) async throws(KafkaError) {
        let deadline = ContinuousClock.now + self.configuration.deliveryTimeout
        while true {
            guard let error = Self.produce(record, id: id, on: self.client.handle) else {
                KafkaTraffic.process.produced(record.topic)
                return
            }
            let code = rd_kafka_error_code(error)
            guard code == RD_KAFKA_RESP_ERR__QUEUE_FULL, ContinuousClock.now < deadline else {
                throw KafkaError(.produce, "produce to \(record.topic)", consuming: error)
            }
            rd_kafka_error_destroy(error)
            try? await Task.sleep(for: .milliseconds(5))  // the poller drains delivery reports meanwhile
        }
    }

    /// Calls `rd_kafka_produceva`, which copies key, value and headers itself (`RD_KAFKA_MSG_F_COPY`), so all three
    /// are handed over in place and a large header (the chain-verifier's ~19 KB `apple-signed-payload`) is copied
    /// once, not twice; only the topic and header names are copied here, as C strings. Returns librdkafka's error,
    /// if any.
    private static func produce(_ record: ProducerRecord, id: UInt, on handle: OpaquePointer) -> OpaquePointer? {
        let strings = ([record.topic] + record.headers.map(\.name)).map { strdup($0)! }
        defer { strings.forEach { free($0) } }
        var pointers: [UnsafeRawBufferPointer?] = []
        pointers.reserveCapacity(record.headers.count + 2)
        return Self.withBytes(of: [record.key] + record.headers.map(\.value) + [record.value], into: &pointers) {
            bytes in
            var values: [rd_kafka_vu_t] = []
            values.reserveCapacity(record.headers.count + 5)
            var topic = rd_kafka_vu_t()
            topic.vtype = RD_KAFKA_VTYPE_TOPIC
            topic.u.cstr = UnsafePointer(strings[0])
            values.append(topic)
            var key = rd_kafka_vu_t()
            key.vtype = RD_KAFKA_VTYPE_KEY
            key.u.mem.ptr = bytes[0].flatMap { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
            key.u.mem.size = bytes[0]?.count ?? 0
            values.append(key)
            for index in record.headers.indices {
                var header = rd_kafka_vu_t()
                header.vtype = RD_KAFKA_VTYPE_HEADER
                header.u.header.name = UnsafePointer(strings[index + 1])
                header.u.header.val = bytes[index + 1]?.baseAddress
                header.u.header.size = bytes[index + 1].map { $0.count } ?? -1
                values.append(header)
            }
            var flags = rd_kafka_vu_t()
            flags.vtype = RD_KAFKA_VTYPE_MSGFLAGS
            flags.u.i = RD_KAFKA_MSG_F_COPY
            values.append(flags)
            var opaque = rd_kafka_vu_t()
            opaque.vtype = RD_KAFKA_VTYPE_OPAQUE
            opaque.u.ptr = UnsafeMutableRawPointer(bitPattern: id)
            values.append(opaque)
            var value = rd_kafka_vu_t()  // nil: a tombstone
            value.vtype = RD_KAFKA_VTYPE_VALUE
            value.u.mem.ptr = bytes[bytes.count - 1].flatMap { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
            value.u.mem.size = bytes[bytes.count - 1]?.count ?? 0
            values.append(value)
            return values.withUnsafeBufferPointer { rd_kafka_produceva(handle, $0.baseAddress, $0.count) }
        }
    }

    /// One byte's address, for empty bytes: librdkafka writes a header or value without an address as null (a
    /// tombstone), not as empty.
    private nonisolated(unsafe) static let emptyBytes = UnsafeRawBufferPointer(
        UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1))

    /// Calls `body` with the bytes of each of `arrays` in place, in order: nil for a nil array, an address (and no
    /// bytes) for an empty one. The pointers are valid only during the call.
    private static func withBytes<Result>(
        of arrays: [[UInt8]?], into pointers: inout [UnsafeRawBufferPointer?],
        _ body: ([UnsafeRawBufferPointer?]) -> Result
    ) -> Result {
        guard pointers.count < arrays.count else { return body(pointers) }
        guard let bytes = arrays[pointers.count] else {
            pointers.append(nil)
            return Self.withBytes(of: arrays, into: &pointers, body)
        }
        guard !bytes.isEmpty else {
            pointers.append(UnsafeRawBufferPointer(rebasing: Self.emptyBytes[0..<0]))
            return Self.withBytes(of: arrays, into: &pointers, body)
        }
        return bytes.withUnsafeBytes { buffer in
            pointers.append(buffer)
            return Self.withBytes(of: arrays, into: &pointers, body)
        }
    }

    // MARK: Lifecycle

    /// Waits for graceful shutdown, then flushes and fails what could not be delivered. A fatal error of the
    /// client (librdkafka: "the application must terminate or recreate the producer", e.g. an idempotent
    /// producer fenced after a broker stall) ends the service with that error instead, so the process exits
    /// and its orchestrator starts a fresh one rather than answering 503 for ever.
    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if let fatal = self.fatalError {
                self.logger.critical(
                    "kafka producer hit a fatal error; stopping so a fresh process takes over",
                    metadata: ["error": "\(fatal)"])
                await self.shutdown()
                throw KafkaError(.client, "fatal producer error: \(fatal)", isFatal: true)
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
        }
        await self.shutdown()
    }

    /// librdkafka's fatal error, or the broker's fencing of this producer, if either happened (it is unusable
    /// from then on).
    public var fatalError: String? {
        var text = [CChar](repeating: 0, count: 512)
        let code = rd_kafka_fatal_error(self.client.handle, &text, text.count)
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return self.poller.fenced.withLock { $0 } }
        return String(cString: text)
    }

    /// Flushes queued messages (bounded by the shutdown flush timeout) and refuses new ones.
    public func shutdown() async {
        self.poller.pending.withLock { $0.closed = true }
        let timeout = Int32(clamping: self.configuration.shutdownFlushTimeout.milliseconds)
        let client = self.client
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.lingerCutter.stop()  // waits for a flush it may be in (at most the linger)
                let handle = client.handle
                let result = rd_kafka_flush(handle, timeout)
                if result != RD_KAFKA_RESP_ERR_NO_ERROR {
                    self.logger.error(
                        "kafka producer flush did not finish", metadata: ["outq": "\(rd_kafka_outq_len(handle))"])
                }
                done.resume()
            }
        }
        self.poller.stop()
        let undelivered = self.poller.pending.withLock { state -> [DeliveryPromise] in
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        undelivered.forEach { $0.resolve(.failure(KafkaError(.shutdown, "the producer shut down before delivery"))) }
    }
}
