import CRdKafka
import Foundation
import Logging
import Synchronization

/// Polls a producer's main queue on a dedicated thread and resumes each message's continuation from
/// its delivery report. The thread owns this object, not the producer, so a producer can be released
/// while its poller runs; the producer stops the poller when it shuts down or deinitializes.
final class DeliveryReportPoller: Sendable {
    /// What awaits each in-flight message, by the id passed to librdkafka as the message opaque.
    struct Pending {
        var nextID: UInt = 1
        var waiting: [UInt: DeliveryPromise] = [:]
        var closed = false
    }

    let pending = Mutex(Pending())
    private let client: RdKafkaClient
    private let logger: Logger
    private let polling = Atomic<Bool>(true)
    /// Set when the broker fenced this producer (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH): every later
    /// message fails the same way, so the producer is as good as dead (see ``KafkaProducer/fatalError``).
    let fenced = Mutex<String?>(nil)
    private let finished = DispatchSemaphore(value: 0)
    /// When the broker last acknowledged a message (uptime nanoseconds; 0: never): proof it is up.
    private let lastAcknowledged = Atomic<UInt64>(0)

    /// Whether the broker acknowledged a message within `window` of now.
    func acknowledged(within window: Duration) -> Bool {
        let last = self.lastAcknowledged.load(ordering: .relaxed)
        return last > 0 && DispatchTime.now().uptimeNanoseconds - last <= UInt64(window.milliseconds) * 1_000_000
    }

    /// Starts polling the client's main queue.
    init(client: RdKafkaClient, logger: Logger) {
        self.client = client
        self.logger = logger
        let thread = Thread { [self] in self.pollLoop() }
        thread.name = "kafka-producer-poll"
        thread.start()
    }

    /// Stops the thread and waits for it; later calls return at once.
    func stop() {
        if self.polling.exchange(false, ordering: .acquiringAndReleasing) {
            self.finished.wait()
        }
    }

    /// Polls until stopped.
    private func pollLoop() {
        let queue = rd_kafka_queue_get_main(self.client.handle)
        defer {
            rd_kafka_queue_destroy(queue)
            self.finished.signal()
        }
        while self.polling.load(ordering: .acquiring) {
            guard let event = rd_kafka_queue_poll(queue, 100) else { continue }
            defer { rd_kafka_event_destroy(event) }
            switch rd_kafka_event_type(event) {
            case RD_KAFKA_EVENT_DR: self.handleDeliveryReports(event)
            case RD_KAFKA_EVENT_ERROR:
                let fatal = rd_kafka_event_error_is_fatal(event) != 0
                self.logger.log(
                    level: fatal ? .critical : .warning, "kafka producer error",
                    metadata: ["error": "\(String(cString: rd_kafka_event_error_string(event)))"])
            default: break
            }
        }
    }

    /// Resumes the continuation of every message in a delivery-report event.
    private func handleDeliveryReports(_ event: OpaquePointer) {
        while let message = rd_kafka_event_message_next(event) {
            let id = UInt(bitPattern: message.pointee._private)
            guard let promise = self.pending.withLock({ $0.waiting.removeValue(forKey: id) }) else { continue }
            let topic = String(cString: rd_kafka_topic_name(message.pointee.rkt))
            if message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                self.lastAcknowledged.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
                promise.resolve(
                    .success(
                        DeliveryReport(
                            topic: topic, partition: message.pointee.partition, offset: message.pointee.offset)))
            } else {
                if message.pointee.err == RD_KAFKA_RESP_ERR_PRODUCER_FENCED
                    || message.pointee.err == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH
                {
                    let reason = String(cString: rd_kafka_err2str(message.pointee.err))
                    self.fenced.withLock { $0 = $0 ?? reason }
                }
                promise.resolve(
                    .failure(KafkaError(.delivery, "delivery to \(topic)", responseError: message.pointee.err)))
            }
        }
    }
}
