import AppStoreAPI
import AppStoreModels
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import RateAndRetry
import RdKafka
import ServiceContextModule
import ServiceRuntime
import Tracing

/// Resolves status requests: Get All Subscription Statuses (rate-limited by the token bucket), verified by
/// the client, and publishes the subscription's status snapshot to the verified topic, keyed by the
/// subscription, for the entitlement updater to apply.
///
/// Failures never block the partition: a retryable failure (429, 5xx, timeout) or a missing token
/// reschedules the request to the retry topic with `attempt` and `not-before` headers and the loop moves
/// on. The retry topic is a delay queue consumed by a second loop that waits for each record's
/// `not-before` (at most `retryMaximumDelay`, below the consumer's poll interval). A permanent failure, or
/// retryable failures for `giveUpAfter` since the first one, ends in the DLQ with the reason. Returns once every output is acknowledged.
struct StatusRequestHandler: BatchHandler {
    /// Header: failed calls so far.
    static let attemptHeader = "attempt"
    /// Header: not to be called before this instant (epoch ms).
    static let notBeforeHeader = "not-before"
    /// Header: the last failure, for operators.
    static let lastErrorHeader = "last-error"
    /// Header: when the first call failed (epoch ms): retryable failures are retried until `giveUpAfter` past it.
    static let firstFailureHeader = "first-failure"
    /// The headers a reschedule writes (and a new reschedule or a DLQ record drops).
    static let schedulingHeaders: Set<String> = [attemptHeader, notBeforeHeader, lastErrorHeader, firstFailureHeader]

    let client: AppStoreServerAPIClient
    let bucket: RateBudget
    let producer: KafkaProducer
    let topics: PipelineTopics
    /// Signs the snapshots and consumption outcomes it writes to the verified topic.
    let signing: RecordSigner
    let retryTopic: String
    let concurrency: Int
    let giveUpAfter: Duration
    let retryBaseDelay: Duration
    let retryMaximumDelay: Duration
    let outcomes: LabelledCounter
    let calls: LabelledCounter
    /// Consumption answers by result: `sent`, `late` (the window closed first), `failed`.
    let consumptionAnswers: LabelledCounter
    let logger: Logger

    /// What became of one request.
    enum Outcome {
        case resolved(ProducerRecord)
        case rescheduled(ProducerRecord)
        case deadLettered(ProducerRecord, reason: String)

        var record: ProducerRecord {
            switch self {
            case .resolved(let record), .rescheduled(let record), .deadLettered(let record, _): record
            }
        }

        /// The outcome with its record carrying the trace context (the snapshot goes on to the updater in it).
        func carrying(_ context: ServiceContext) -> Outcome {
            var record = self.record
            TraceHeaders.inject(context, into: &record.headers)
            switch self {
            case .resolved: return .resolved(record)
            case .rescheduled: return .rescheduled(record)
            case .deadLettered(_, let reason): return .deadLettered(record, reason: reason)
            }
        }
    }

    func handle(_ records: [ConsumerRecord]) async throws {
        var deliveries: [PendingDelivery] = []
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            var running = 0
            for record in records {
                if running >= self.concurrency, let outcome = try await group.next() {
                    deliveries.append(try await self.emit(outcome))
                    running -= 1
                }
                group.addTask {
                    // In the trace of the notification that asked for it, when there is one.
                    await withSpan(
                        "resolve status request", context: TraceHeaders.context(of: record.headers), ofKind: .consumer
                    ) { _ in
                        await self.resolve(record).carrying(ServiceContext.current ?? .topLevel)
                    }
                }
                running += 1
            }
            for try await outcome in group { deliveries.append(try await self.emit(outcome)) }
        }
        for delivery in deliveries { _ = try await delivery.report }
    }

    /// Produces an outcome's record and counts it.
    private func emit(_ outcome: Outcome) async throws -> PendingDelivery {
        switch outcome {
        case .resolved: self.outcomes.increment("resolved")
        case .rescheduled: self.outcomes.increment("rescheduled")
        case .deadLettered: self.outcomes.increment("dead-lettered")
        }
        return try await self.producer.enqueue(outcome.record)
    }

    // MARK: One request

    /// Resolves one request; never throws: every request ends resolved, rescheduled or dead-lettered.
    func resolve(_ record: ConsumerRecord) async -> Outcome {
        let answer = record.value.flatMap { try? JSONDecoder().decode(ConsumptionAnswer.self, from: Data($0)) }
        let request = record.value.flatMap { try? JSONDecoder().decode(StatusRequest.self, from: Data($0)) }
        guard answer?.schema == ConsumptionAnswer.schema || request != nil else {
            return self.deadLetter(
                record, reason: "format", detail: "not a status request or consumption answer", uuid: nil)
        }
        let attempt = record.header(Self.attemptHeader)?.text.flatMap(Int.init) ?? 0
        if let notBefore = record.header(Self.notBeforeHeader)?.text.flatMap(Int64.init) {
            let wait = min(Double(notBefore) / 1000 - Date().timeIntervalSince1970, self.retryMaximumDelay.timeInterval)
            if wait > 0 { try? await Task.sleep(for: .milliseconds(Int64(wait * 1000))) }
        }
        switch await self.bucket.acquire(maximumWait: .seconds(1)) {
        case .deferred(let until):
            self.outcomes.increment("rate-deferred")
            return self.reschedule(
                record, attempt: attempt, at: until, error: "waiting for this replica's share of the rate limit")
        case .granted:
            break
        }
        if let answer, answer.schema == ConsumptionAnswer.schema {
            return await self.send(answer, record: record, attempt: attempt)
        }
        guard let request else {
            return self.deadLetter(record, reason: "format", detail: "not a status request", uuid: nil)
        }
        // The request's own app and environment: a Sandbox refund is asked of Sandbox, with that app's bid.
        guard let environment = Environment(rawValue: request.environment), environment.isAppStoreServer else {
            return self.deadLetter(
                record, reason: "status-request",
                detail: "no App Store Server API serves environment \(request.environment)",
                uuid: request.notificationUUID)
        }
        do {
            let client = try self.client.scoped(
                bundleID: request.bundleId ?? self.client.bundleID, environment: environment)
            let statuses = try await client.subscriptionStatuses(request.originalTransactionId)
            self.calls.increment("ok")
            guard
                let status = statuses.subscriptions.first(where: {
                    $0.originalTransactionId == request.originalTransactionId
                })
            else {
                return self.deadLetter(
                    record, reason: "status-request",
                    detail: "the answer has no status for \(request.originalTransactionId)",
                    uuid: request.notificationUUID)
            }
            let snapshot = StatusSnapshot(
                requestId: request.requestId, notificationUUID: request.notificationUUID,
                subject: request.originalTransactionId,
                environment: statuses.environment.rawValue, status: status.status, transaction: status.transaction,
                renewalInfo: status.renewalInfo, signedTransactionInfo: status.signedTransactionInfo,
                signedRenewalInfo: status.signedRenewalInfo)
            return .resolved(
                try! VerifiedTopicRecords.snapshot(
                    snapshot, topics: self.topics, requestId: request.requestId, signing: self.signing))
        } catch {
            self.calls.increment(Self.callLabel(error))
            if let retryAfter = error.retryAfter { await self.bucket.pause(until: retryAfter) }
            guard error.isRetryable else {
                return self.deadLetter(
                    record, reason: "status-request", detail: error.description, uuid: request.notificationUUID)
            }
            let firstFailure =
                record.header(Self.firstFailureHeader)?.text.flatMap(Int64.init)
                ?? Int64(Date().timeIntervalSince1970 * 1000)
            guard
                Double(Int64(Date().timeIntervalSince1970 * 1000) - firstFailure) / 1000 < self.giveUpAfter.timeInterval
            else {
                return self.deadLetter(
                    record, reason: "status-request",
                    detail: "gave up after \(attempt + 1) attempts over \(self.giveUpAfter): \(error.description)",
                    uuid: request.notificationUUID)
            }
            let delay = Backoff(base: self.retryBaseDelay, maximum: self.retryMaximumDelay)
                .delay(attempt: attempt + 1, jitter: Double.random(in: 0..<1))
            let due = error.retryAfter ?? Date().addingTimeInterval(delay.timeInterval)
            return self.reschedule(record, attempt: attempt + 1, at: due, error: error.description)
        }
    }

    // MARK: Outputs

    /// The request again, on the retry topic, not to be called before `due` (capped at the maximum delay).
    func reschedule(_ record: ConsumerRecord, attempt: Int, at due: Date, error: String) -> Outcome {
        let latest = Date().addingTimeInterval(self.retryMaximumDelay.timeInterval)
        let notBefore = Int64((min(due, latest).timeIntervalSince1970 * 1000).rounded(.up))
        // The first failure's time stays with the request; a deferral before any failure sets none.
        let firstFailure =
            record.header(Self.firstFailureHeader)?.text
            ?? (attempt > 0 ? String(Int64(Date().timeIntervalSince1970 * 1000)) : nil)
        let kept =
            record.headers.filter { !Self.schedulingHeaders.contains($0.name) }
            + (firstFailure.map { [KafkaHeader(name: Self.firstFailureHeader, text: $0)] } ?? [])
        return .rescheduled(
            ProducerRecord(
                topic: self.retryTopic, key: record.key, value: record.value,
                headers: kept + [
                    KafkaHeader(name: Self.attemptHeader, text: String(attempt)),
                    KafkaHeader(name: Self.notBeforeHeader, text: String(notBefore)),
                    KafkaHeader(name: Self.lastErrorHeader, text: String(error.prefix(500))),
                ]))
    }

    /// A DLQ record with the reason; `iapctl replay` sends it back to the status-requests topic.
    private func deadLetter(_ record: ConsumerRecord, reason: String, detail: String, uuid: String?) -> Outcome {
        self.logger.warning("status request dead-lettered", metadata: ["reason": "\(reason)", "detail": "\(detail)"])
        var original = RejectedNotificationRecord.OriginalMessage(record)
        // Replay sends it to the front of the line, not the delay queue, with its attempts forgotten.
        original.topic = self.topics.statusRequests
        original.headers = original.headers.filter { !Self.schedulingHeaders.contains($0.key) }
        let rejected = RejectedNotificationRecord(
            reason: reason, detail: detail, notificationUUID: uuid, original: original)
        return .deadLettered(
            ProducerRecord(
                topic: self.topics.rejected, key: record.key, value: try! rejected.encoded(),
                headers: [KafkaHeader(name: PipelineHeaders.schema, text: RejectedNotificationRecord.schema)]),
            reason: reason)
    }

    /// The metrics label of a failed call.
    static func callLabel(_ error: AppStoreAPIError) -> String {
        switch error.kind {
        case .http(let status, _, _): status == 429 ? "rate-limited" : status >= 500 ? "server-error" : "client-error"
        case .timeout: "timeout"
        case .transport: "transport"
        case .invalidResponse: "invalid-response"
        case .verification: "verification-failed"
        }
    }
}
