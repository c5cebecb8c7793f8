import JWSVerification
import NIOCore
import Prometheus
import RdKafka
import ServiceContextModule
import ServiceRuntime
import Tracing

/// Verifies a batch of raw messages on every core and produces each output as soon as it and every output
/// before it are ready, then returns once the broker acknowledged them all (the batch's tail sent without the
/// producer's linger), so the loop stores offsets only for durable results. Producing while the rest of the batch is
/// still being verified keeps the cores busy while the broker works (waiting for the whole batch first left them idle
/// for a seventh of the time).
///
/// Order: outputs are enqueued in the order their inputs were consumed, and the producer is idempotent,
/// so messages of one key (one partition) stay in order downstream.
struct VerifyBatchHandler: BatchHandler {
    let verification: NotificationVerification
    let producer: KafkaProducer
    let metrics: ChainVerifierMetrics

    /// How many notifications are verified at once: eight per core. Each finished one starts the next, so the
    /// task that hands outputs to the producer runs a few milliseconds behind, not behind a queue of the whole
    /// batch's tasks: outputs reach the producer in a steady stream instead of bursts of a megabyte and more, which
    /// kept librdkafka's broker thread spinning (see ``buildApplication``). Two per core cost more CPU a notification
    /// on two shared cores (a thread woken for nearly every one); 32 per core was slower than none. Cores as NIO
    /// counts them, within the container's CPU quota and cpuset: Foundation counts the node's, and a pod of two
    /// CPUs on a node of 64 would verify a whole batch at once again.
    let concurrency: Int
    /// Whether tracing is on (``TracingSetup/isOn``). Off, a notification gets no span and its output no trace
    /// headers, as with the no-op tracer, without paying for either: the span, its task-local context and the
    /// header look-ups were 1.6 % of this service's CPU for nothing.
    let traced: Bool
    /// Whether a notification whose trace ingest did not sample is passed on without a span: its output carries the
    /// same `traceparent`. Under a parent-based sampler (``TracingSetup/followsParentSampling(environment:)``) that
    /// span would record nothing, yet starting it, its task-local context and writing its header were 2.5 % of this
    /// service's CPU with tracing sampled at 1 %.
    let forwardsUnsampledTraces: Bool

    init(verification: NotificationVerification, producer: KafkaProducer, metrics: ChainVerifierMetrics) {
        self.verification = verification
        self.producer = producer
        self.metrics = metrics
        self.concurrency = max(4, System.coreCount * 8)
        self.traced = TracingSetup.isOn
        self.forwardsUnsampledTraces = self.traced && TracingSetup.followsParentSampling()
    }

    func handle(_ records: [ConsumerRecord]) async throws {
        let outcomes = try await withThrowingTaskGroup(of: (Int, VerificationOutcome).self) { group in
            var next = records.enumerated().makeIterator()
            /// Starts verifying the next record, if any is left.
            func startNext() {
                guard let (index, record) = next.next() else { return }
                group.addTask {
                    guard self.traced else { return (index, await self.verification.verify(record)) }
                    if self.forwardsUnsampledTraces, let trace = TraceHeaders.unsampledTrace(in: record.headers) {
                        return (index, await self.verification.verify(record).forwarding(trace))
                    }
                    // Each notification's span continues the trace ingest started; its output carries this span on.
                    return await withSpan(
                        "verify notification", context: TraceHeaders.context(of: record.headers), ofKind: .consumer
                    ) {
                        _ in
                        (index, await self.verification.verify(record).carrying(ServiceContext.current ?? .topLevel))
                    }
                }
            }
            for _ in 0..<self.concurrency { startNext() }
            var outcomes = [VerificationOutcome?](repeating: nil, count: records.count)
            var pending: [PendingDelivery] = []
            pending.reserveCapacity(records.count)
            for try await (index, outcome) in group {
                outcomes[index] = outcome
                // Enqueue the ready prefix, in input order.
                while pending.count < records.count, let next = outcomes[pending.count] {
                    switch next {
                    case .verified(let record), .rejected(let record, _):
                        pending.append(try await self.producer.enqueue(record))
                    case .retry(let error): throw error  // the rest is cancelled; the batch is tried again
                    }
                }
                startNext()
            }
            // Nothing follows the batch's last output until these are acknowledged: send the tail now rather than
            // after the producer's linger, which is there for the middle of a large batch (see ``buildApplication``).
            self.producer.sendQueuedNow()
            for delivery in pending { _ = try await delivery.report }
            return outcomes.map { $0! }
        }
        for outcome in outcomes {
            switch outcome {
            case .verified: self.metrics.verified.increment()
            case .rejected(_, let reason): self.metrics.rejected(reason: reason)
            case .retry: break
            }
        }
    }
}

/// The chain verifier's metrics.
struct ChainVerifierMetrics: Sendable {
    private let rejectedByReason: LabelledCounter
    /// Notifications verified and published.
    let verified: Counter

    init(registry: PrometheusCollectorRegistry) {
        self.rejectedByReason = LabelledCounter(
            registry: registry, namespace: "chain_verifier", name: "rejected", label: "reason",
            help: "Messages dead-lettered, by reason")
        self.verified = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "chain_verifier", metricName: "verified", unitName: "total",
                helpText: "Notifications verified"))
    }

    /// Counts a message sent to the DLQ, by reason.
    func rejected(reason: String) {
        self.rejectedByReason.increment(reason)
    }
}
