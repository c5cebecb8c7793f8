import Foundation
public import Logging
import RateAndRetry
public import RdKafka
public import ServiceLifecycle

/// What a consumer service does with each batch of records. It must be idempotent: after a crash or a
/// rebalance the same records come again.
public protocol BatchHandler: Sendable {
    /// Processes a batch; returns only when its effect is durable (produced and acknowledged, committed).
    func handle(_ records: [ConsumerRecord]) async throws
}

/// The generic at-least-once loop: poll a batch → handle it → store its offsets, until graceful shutdown,
/// then finish the batch in hand, close the consumer (leaving the group) and return.
///
/// A failed batch is retried with exponential backoff (100 ms doubling to 10 s) and its offsets are not
/// stored meanwhile; after `maximumAttempts` the loop throws, the service exits and its replacement
/// starts again from the last stored offsets.
public struct ConsumerLoop<Handler: BatchHandler>: Service {
    public let consumer: KafkaConsumer
    public let handler: Handler
    public let readiness: Readiness?
    public var maximumBatch: Int = 500
    public var pollTimeout: Duration = .milliseconds(100)
    /// How long a batch keeps filling after its first record (zero: what is ready at once).
    public var linger: Duration = .zero
    public var maximumAttempts: Int = 20
    /// Where the member's lag and the gaps it met are reported (at most once a second, after a poll); nil: not reported.
    public var lagMetric: ConsumerLagMetric?
    private let logger: Logger

    /// Creates the loop.
    public init(consumer: KafkaConsumer, handler: Handler, readiness: Readiness? = nil, logger: Logger) {
        self.consumer = consumer
        self.handler = handler
        self.readiness = readiness
        self.logger = logger
    }

    /// Runs until graceful shutdown. The batch in hand is finished (not cancelled) before the loop stops;
    /// a batch that is still failing when shutdown begins is abandoned with its offsets unstored.
    public func run() async throws {
        self.readiness?.set(true)
        defer { self.readiness?.set(false) }
        var lastLagReport = ContinuousClock.now - .seconds(1)
        do {
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let records = try await self.consumer.poll(
                    maxMessages: self.maximumBatch, timeout: self.pollTimeout, linger: self.linger)
                if !records.isEmpty {
                    try await self.handleWithRetries(records)
                    self.consumer.storeOffsets(after: records)
                }
                if let lagMetric = self.lagMetric, ContinuousClock.now - lastLagReport >= .seconds(1) {
                    lagMetric.report(self.consumer.assignment(), gaps: self.consumer.gapCounts)
                    lastLagReport = .now
                }
            }
        } catch is ShutdownDuringRetry {
            self.logger.warning("shutting down with a failing batch; it will be consumed again")
        }
        await self.consumer.close()
    }

    /// Ends the retries of a failing batch once shutdown has begun.
    private struct ShutdownDuringRetry: Error {}

    /// Hands a batch to the handler until it succeeds or the attempts run out.
    private func handleWithRetries(_ records: [ConsumerRecord]) async throws {
        let backoff = Backoff(base: .milliseconds(100), maximum: .seconds(10))
        for attempt in 1... {
            do {
                try await self.handler.handle(records)
                return
            } catch {
                guard attempt < self.maximumAttempts else { throw error }
                if Task.isShuttingDownGracefully { throw ShutdownDuringRetry() }
                self.logger.warning(
                    "batch failed, retrying",
                    metadata: [
                        "attempt": "\(attempt)", "records": "\(records.count)", "error": "\(String(reflecting: error))",
                    ])
                try await Task.sleep(for: backoff.delay(attempt: attempt))
            }
        }
    }
}
