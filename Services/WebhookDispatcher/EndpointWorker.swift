import Foundation
import Logging
import Prometheus
import RateAndRetry
import ServiceRuntime
import Storage
import Synchronization
import Webhooks

/// Delivers one endpoint's backlog until cancelled or the endpoint is disabled: leases the deliveries that are due
/// and first of their subject, sends them at the endpoint's rate with at most its concurrency, writes each attempt
/// back, and waits for a wake-up or its poll interval when nothing is due. When every attempt of a round failed, the
/// endpoint is probed with one delivery at a time, further apart each time, so a dead endpoint costs little. Each
/// endpoint has its own worker, so a slow or dead one never delays another.
struct EndpointWorker: Sendable {
    /// The endpoint as last read (its secrets may rotate while it runs).
    let target: TargetBox
    let backlog: WebhookBacklog
    let sender: WebhookSender
    let settings: WebhookDispatcherSettings
    let signal: Signal
    let metrics: DispatcherMetrics
    let logger: Logger

    /// Runs until cancelled, or until the endpoint is disabled (410, or failing for the retry horizon).
    func run() async {
        var bucket = TokenBucket(
            ratePerSecond: Double(self.current.ratePerSecond), burst: self.current.ratePerSecond,
            now: Self.seconds())
        var failedRounds = 0
        var databaseFailures = 0
        while !Task.isCancelled {
            let target = self.current
            do {
                let limit = failedRounds > 0 ? 1 : min(200, max(1, target.concurrency * 4))
                let claimed = try await self.backlog.claim(
                    endpointId: target.id, limit: limit, lease: self.settings.lease.inSeconds)
                databaseFailures = 0
                if claimed.isEmpty {
                    await self.signal.wait(upTo: self.settings.pollInterval)
                    continue
                }
                let outcome = await self.deliver(claimed, to: target, bucket: &bucket)
                // Written by a task of its own, so a shutdown in the middle still records what was sent.
                let backlog = self.backlog
                try await Task { try await backlog.complete(outcome.records) }.value
                if let reason = outcome.disable {
                    if try await Task(operation: { try await backlog.disable(endpointId: target.id, reason: reason) })
                        .value
                    {
                        self.metrics.disabled.increment(reason.contains("410") ? "gone" : "horizon")
                        self.logger.warning(
                            "webhook endpoint disabled, its backlog kept",
                            metadata: ["endpoint": "\(target.id)", "reason": "\(reason)"])
                    }
                    return
                }
                if outcome.delivered == 0 {
                    failedRounds += 1
                    let pause =
                        self.settings.schedule.nextAttempt(
                            after: failedRounds, firstFailure: Date(), now: Date())?.timeIntervalSinceNow ?? 1
                    try await Task.sleep(for: .milliseconds(Int64(max(0.01, pause) * 1000)))
                } else {
                    failedRounds = 0
                }
            } catch is CancellationError {
                return
            } catch {
                if Task.isCancelled { return }
                // PostgreSQL is away: leases run out by themselves, so wait and look again.
                databaseFailures += 1
                self.logger.warning(
                    "webhook backlog unavailable, retrying",
                    metadata: ["endpoint": "\(target.id)", "error": "\(String(reflecting: error))"])
                let backoff = Backoff(base: .milliseconds(200), maximum: .seconds(5))
                try? await Task.sleep(for: backoff.delay(attempt: databaseFailures))
            }
        }
    }

    /// The endpoint as last read.
    var current: WebhookTarget { self.target.value }

    /// What a round of attempts came to.
    struct RoundOutcome {
        var records: [DeliveryAttemptRecord] = []
        var delivered = 0
        /// Why the endpoint must be disabled, when it must.
        var disable: String?
    }

    /// Sends the leased deliveries, at most `concurrency` at once and each after a token of the endpoint's rate.
    private func deliver(_ claimed: [ClaimedDelivery], to target: WebhookTarget, bucket: inout TokenBucket) async
        -> RoundOutcome
    {
        let secrets = target.secrets.compactMap(WebhookSecret.init)
        var outcome = RoundOutcome()
        await withTaskGroup(of: (ClaimedDelivery, Date, WebhookSender.Answer).self) { group in
            var inFlight = 0
            func record(_ delivery: ClaimedDelivery, _ attemptedAt: Date, _ answer: WebhookSender.Answer) {
                let now = Date()
                let decision = DeliveryDecision.after(
                    status: answer.status, previousAttempts: delivery.attempts, firstFailure: delivery.firstFailureAt,
                    now: now, schedule: self.settings.schedule, unit: Double.random(in: 0..<1))
                var retryAt: Date?
                switch decision {
                case .delivered:
                    outcome.delivered += 1
                    self.metrics.attempts.increment("delivered")
                    self.metrics.eventToDelivery.record(
                        .milliseconds(Int64(max(0, now.timeIntervalSince(delivery.publishedAt)) * 1000)))
                case .retry(let at):
                    retryAt = at
                    self.metrics.attempts.increment("failed")
                case .disableEndpoint(let reason):
                    retryAt = now
                    outcome.disable = outcome.disable ?? reason
                    self.metrics.attempts.increment(answer.status == 410 ? "gone" : "failed")
                }
                outcome.records.append(
                    DeliveryAttemptRecord(
                        deliveryId: delivery.id, attemptedAt: attemptedAt, status: answer.status,
                        latencyMs: answer.latencyMs, error: answer.error, response: answer.response, retryAt: retryAt))
            }
            for delivery in claimed {
                if inFlight >= max(1, target.concurrency), let (done, at, answer) = await group.next() {
                    inFlight -= 1
                    record(done, at, answer)
                }
                let wait = bucket.take(now: Self.seconds(), maximumWait: .infinity) ?? 0
                if wait > 0 { try? await Task.sleep(for: .milliseconds(Int64(wait * 1000))) }
                let sender = self.sender, url = target.url
                group.addTask {
                    let attemptedAt = Date()
                    return (delivery, attemptedAt, await sender.send(delivery, to: url, secrets: secrets))
                }
                inFlight += 1
            }
            for await (done, at, answer) in group { record(done, at, answer) }
        }
        return outcome
    }

    /// Monotonic seconds for the rate bucket.
    static func seconds() -> Double {
        (ContinuousClock.now - Self.origin).inSeconds
    }
    private static let origin = ContinuousClock.now
}

/// The endpoint a worker delivers to, replaced when a refresh reads it again.
final class TargetBox: Sendable {
    private let target: Mutex<WebhookTarget>

    init(_ target: WebhookTarget) {
        self.target = Mutex(target)
    }

    /// The endpoint as last read.
    var value: WebhookTarget {
        get { self.target.withLock { $0 } }
        set { self.target.withLock { $0 = newValue } }
    }
}
