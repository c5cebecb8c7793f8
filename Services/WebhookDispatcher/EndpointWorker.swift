import Foundation
import Logging
import Prometheus
import RateAndRetry
import ServiceRuntime
import Storage
import Synchronization
import Webhooks

/// Delivers one endpoint's backlog until cancelled or the endpoint is disabled. It keeps up to the endpoint's
/// concurrency of deliveries in flight, each after a token of the endpoint's rate: whenever answers come back it writes
/// them (all that came, in one statement) and leases as many more as there are free places, taking only deliveries
/// that are due and first of their subject. After a run of failed answers with no delivery between (twice its
/// concurrency), the endpoint is probed with one delivery at a time, further apart each time, so a dead endpoint costs
/// little. Each endpoint has its own worker,
/// so a slow or dead one never delays another.
struct EndpointWorker: Sendable {
    /// The endpoint as last read (its secrets may rotate while it runs).
    let target: TargetBox
    let backlog: WebhookBacklog
    let sender: WebhookSender
    let settings: WebhookDispatcherSettings
    /// Raised when deliveries were queued for the endpoint, and when an answer came back.
    let signal: Signal
    let metrics: DispatcherMetrics
    /// When the intake was last seen caught up (deliveries missing their predecessor wait for it).
    let intake: IntakeProgress
    let logger: Logger

    /// Runs until cancelled, or until the endpoint is disabled (410, or failing for the retry horizon).
    func run() async {
        let answers = AnswerBuffer()
        var state = LoopState(
            bucket: TokenBucket(
                ratePerSecond: Double(self.current.ratePerSecond), burst: self.current.ratePerSecond,
                now: Self.seconds()))
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                let target = self.current
                do {
                    let answered = answers.takeAll()
                    if !answered.isEmpty { try await self.record(answered, state: &state) }
                    if let reason = state.disabling {
                        if state.inFlight.isEmpty {
                            try await self.disable(target.id, reason: reason)
                            return
                        }
                        await self.signal.wait(upTo: self.settings.pollInterval)
                        continue
                    }
                    let probing = state.failedInARow >= Self.probeThreshold(concurrency: target.concurrency)
                    let places = (probing ? 1 : max(1, target.concurrency)) - state.inFlight.count
                    var claimed: [ClaimedDelivery] = []
                    if places > 0 && ContinuousClock.now >= state.pausedUntil {
                        claimed = try await self.backlog.claim(
                            endpointId: target.id, limit: places, lease: self.settings.lease.inSeconds,
                            predecessor: target.filtersTypes
                                ? nil
                                : PredecessorWait(
                                    seconds: self.settings.orderWait.inSeconds,
                                    intakeCaughtUpAgo: self.intake.caughtUpAgo()?.inSeconds))
                    }
                    state.databaseFailures = 0
                    var secrets = target.secrets.compactMap(WebhookSecret.init)
                    for delivery in claimed {
                        let wait = state.bucket.take(now: Self.seconds(), maximumWait: .infinity) ?? 0
                        if wait > 0 {
                            try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
                            // Signed with the secrets as they are when it leaves (a rotation may have come meanwhile).
                            secrets = self.target.value.secrets.compactMap(WebhookSecret.init)
                        }
                        state.inFlight.insert(delivery.id)
                        let sender = self.sender, url = target.url, signal = self.signal, secrets = secrets
                        group.addTask {
                            let attemptedAt = Date()
                            let answer = await sender.send(delivery, to: url, secrets: secrets)
                            answers.append((delivery, attemptedAt, answer))
                            signal.raise()
                        }
                    }
                    if answered.isEmpty && claimed.isEmpty {
                        let pause = state.pausedUntil - ContinuousClock.now
                        await self.signal.wait(
                            upTo: pause > .zero ? min(pause, self.settings.pollInterval) : self.settings.pollInterval)
                    }
                } catch {
                    if Task.isCancelled { break }
                    // PostgreSQL is away: leases run out by themselves, so wait and look again.
                    state.databaseFailures += 1
                    self.logger.warning(
                        "webhook backlog unavailable, retrying",
                        metadata: ["endpoint": "\(target.id)", "error": "\(String(reflecting: error))"])
                    let backoff = Backoff(base: .milliseconds(200), maximum: .seconds(5))
                    try? await Task.sleep(for: backoff.delay(attempt: state.databaseFailures))
                }
            }
            // Stopping: the attempts in flight are abandoned; what came back is written and the rest released, in a
            // task of its own (this one is cancelled), so they are due again at once rather than when leases run out.
            group.cancelAll()
        }
        let leftover = answers.takeAll()
        let unanswered = state.inFlight.subtracting(leftover.map(\.0.id))
        let backlog = self.backlog, records = leftover.map { self.decide($0).record }
        _ = await Task {
            try? await backlog.complete(records)
            try? await backlog.release(Array(unanswered))
        }.value
    }

    /// The endpoint as last read, with this replica's share of its rate and concurrency.
    var current: WebhookTarget {
        var target = self.target.value
        target.ratePerSecond = self.settings.share(target.ratePerSecond)
        target.concurrency = self.settings.share(target.concurrency)
        return target
    }

    /// What the loop keeps between turns.
    struct LoopState {
        var bucket: TokenBucket
        /// Deliveries sent and not yet answered.
        var inFlight: Set<Int64> = []
        /// Failed answers since the last delivered one.
        var failedInARow = 0
        /// No new delivery before this (a failing endpoint is probed further apart each time).
        var pausedUntil = ContinuousClock.now
        /// Why the endpoint is being disabled, once it is.
        var disabling: String?
        var databaseFailures = 0
    }

    /// Writes the answers that came back (in one statement, by a task of its own so a shutdown still records what was
    /// sent), and decides whether the endpoint is failing or must be disabled.
    private func record(
        _ answered: [(ClaimedDelivery, Date, WebhookSender.Answer)], state: inout LoopState
    ) async throws {
        let decided = answered.map(self.decide)
        let records = decided.map(\.record)
        let backlog = self.backlog
        try await Task { try await backlog.complete(records) }.value
        for (delivery, _, _) in answered { state.inFlight.remove(delivery.id) }
        if let reason = decided.compactMap(\.disable).first { state.disabling = state.disabling ?? reason }
        for outcome in decided {
            state.failedInARow = outcome.delivered ? 0 : state.failedInARow + 1
        }
        let threshold = Self.probeThreshold(concurrency: self.current.concurrency)
        if state.failedInARow >= threshold {
            let pause =
                self.settings.schedule.nextAttempt(
                    after: state.failedInARow - threshold + 1, firstFailure: Date(), now: Date())?
                .timeIntervalSinceNow ?? 1
            state.pausedUntil = .now + .milliseconds(Int64(max(0.01, pause) * 1000))
        } else {
            state.pausedUntil = .now
        }
    }

    /// How many failed answers in a row make the endpoint look down (then it is probed one delivery at a time): twice
    /// its concurrency, at least 5, so a share of failures alone does not slow a live endpoint.
    static func probeThreshold(concurrency: Int) -> Int { max(5, 2 * concurrency) }

    /// What an answer comes to: its log line and retry time, whether it delivered, why to disable the endpoint.
    private func decide(
        _ answered: (ClaimedDelivery, Date, WebhookSender.Answer)
    ) -> (record: DeliveryAttemptRecord, delivered: Bool, disable: String?) {
        let (delivery, attemptedAt, answer) = answered
        let now = Date()
        let decision = DeliveryDecision.after(
            status: answer.status, previousAttempts: delivery.attempts, firstFailure: delivery.firstFailureAt,
            now: now, schedule: self.settings.schedule, unit: Double.random(in: 0..<1))
        var retryAt: Date?
        var disable: String?
        switch decision {
        case .delivered:
            self.metrics.attempts.increment("delivered")
            self.metrics.eventToDelivery.record(
                .milliseconds(Int64(max(0, now.timeIntervalSince(delivery.publishedAt)) * 1000)))
        case .retry(let at):
            retryAt = at
            self.metrics.attempts.increment("failed")
        case .disableEndpoint(let reason):
            retryAt = now
            disable = reason
            self.metrics.attempts.increment(answer.status == 410 ? "gone" : "failed")
        }
        let record = DeliveryAttemptRecord(
            deliveryId: delivery.id, attemptedAt: attemptedAt, status: answer.status, latencyMs: answer.latencyMs,
            error: answer.error, response: answer.response, retryAt: retryAt)
        return (record, decision == .delivered, disable)
    }

    /// Disables the endpoint (its backlog kept), counted and said.
    private func disable(_ endpointId: String, reason: String) async throws {
        let backlog = self.backlog
        if try await Task(operation: { try await backlog.disable(endpointId: endpointId, reason: reason) }).value {
            self.metrics.disabled.increment(reason.contains("410") ? "gone" : "horizon")
            self.logger.warning(
                "webhook endpoint disabled, its backlog kept",
                metadata: ["endpoint": "\(endpointId)", "reason": "\(reason)"])
        }
    }

    /// Monotonic seconds for the rate bucket.
    static func seconds() -> Double {
        (ContinuousClock.now - Self.origin).inSeconds
    }
    private static let origin = ContinuousClock.now
}

/// The answers that came back and are not yet written, filled by the sending tasks.
final class AnswerBuffer: Sendable {
    private let answers = Mutex<[(ClaimedDelivery, Date, WebhookSender.Answer)]>([])

    func append(_ answer: (ClaimedDelivery, Date, WebhookSender.Answer)) {
        self.answers.withLock { $0.append(answer) }
    }

    /// Everything that came back since the last call.
    func takeAll() -> [(ClaimedDelivery, Date, WebhookSender.Answer)] {
        self.answers.withLock { answers in
            defer { answers.removeAll(keepingCapacity: true) }
            return answers
        }
    }
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
