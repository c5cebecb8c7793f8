import CRdKafka
import Foundation
import Synchronization

/// Sends what a producer holds back for its linger at once, when asked: a thread of its own calls
/// `rd_kafka_flush`, during which librdkafka treats `linger.ms` as passed, for at most the linger itself (after it
/// the messages would have gone anyway). With delivery reports as events the flush only waits for the producer's
/// message count to reach zero, without polling, so it takes no report from the ``DeliveryReportPoller``.
///
/// For a caller that awaits the acknowledgement of the last message it will produce for a while (a consumer
/// service's batch, ingest's request alone in flight): its tail then waits for the broker, not for messages that will
/// not come.
final class LingerCutter: Sendable {
    private let client: RdKafkaClient
    /// How long one flush may last, in milliseconds: the producer's linger, rounded up.
    private let flushTimeout: Int32
    /// Whether a flush was asked for and has not started yet (requests meanwhile are one).
    private let requested = Atomic<Bool>(false)
    private let running = Atomic<Bool>(true)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread, which sleeps until asked.
    init(client: RdKafkaClient, linger: Duration) {
        self.client = client
        self.flushTimeout = Int32(clamping: max(1, (linger + .nanoseconds(999_999)).milliseconds))
        let thread = Thread { [self] in self.serve() }
        thread.name = "kafka-linger-cut"
        thread.start()
    }

    /// Asks for what is queued to be sent now; returns at once.
    func cut() {
        if !self.requested.exchange(true, ordering: .acquiringAndReleasing) { self.wake.signal() }
    }

    /// Stops the thread and waits for it; later calls return at once.
    func stop() {
        guard self.running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        self.wake.signal()
        self.finished.wait()
    }

    /// Flushes once per request until stopped.
    private func serve() {
        defer { self.finished.signal() }
        while true {
            self.wake.wait()
            guard self.running.load(ordering: .acquiring) else { return }
            self.requested.store(false, ordering: .releasing)
            _ = rd_kafka_flush(self.client.handle, self.flushTimeout)
        }
    }
}
