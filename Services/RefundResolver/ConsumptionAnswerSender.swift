import AppStoreAPI
import AppStoreModels
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import RateAndRetry
import RdKafka
import ServiceRuntime

// MARK: - Consumption answers: sent before their deadline, or reported

extension StatusRequestHandler {
    /// Sends one consumption answer with Send Consumption Information (v2 or v1) in its own app and environment,
    /// before its deadline. Retryable failures (429, 5xx, timeouts) are rescheduled like status requests for as long
    /// as a retry can still beat the deadline; otherwise the outcome says `late` or `failed`. Every end is an outcome
    /// record on the verified topic (applied by the updater), never a silent drop.
    func send(_ answer: ConsumptionAnswer, record: ConsumerRecord, attempt: Int, now: Date = Date()) async -> Outcome {
        let nowMillis = Int64(now.timeIntervalSince1970 * 1000)
        guard nowMillis < answer.deadline else {
            return self.report(
                answer, status: "late", attempts: attempt,
                detail: "the 12-hour window closed before the answer could be sent")
        }
        guard let environment = Environment(rawValue: answer.environment), environment.isAppStoreServer else {
            return self.report(
                answer, status: "failed", attempts: attempt,
                detail: "no App Store Server API serves environment \(answer.environment)")
        }
        do {
            let client = try self.client.scoped(bundleID: answer.bundleId, environment: environment)
            if let body = answer.v1 {
                try await client.sendConsumptionInformationV1(answer.transactionId, body)
            } else if let body = answer.v2 {
                try await client.sendConsumptionInformation(answer.transactionId, body)
            } else {
                return self.report(answer, status: "failed", attempts: attempt, detail: "the answer has no body")
            }
            self.calls.increment("ok")
            return self.report(answer, status: "sent", attempts: attempt + 1, detail: nil)
        } catch {
            self.calls.increment(Self.callLabel(error))
            if let retryAfter = error.retryAfter { await self.bucket.pause(until: retryAfter) }
            guard error.isRetryable else {
                return self.report(answer, status: "failed", attempts: attempt + 1, detail: error.description)
            }
            let delay = Backoff(base: self.retryBaseDelay, maximum: self.retryMaximumDelay)
                .delay(attempt: attempt + 1, jitter: Double.random(in: 0..<1))
            let due = error.retryAfter ?? now.addingTimeInterval(delay.timeInterval)
            guard Int64(due.timeIntervalSince1970 * 1000) < answer.deadline else {
                return self.report(
                    answer, status: "late", attempts: attempt + 1,
                    detail: "still failing when the window closed: \(error.description)")
            }
            return self.reschedule(record, attempt: attempt + 1, at: due, error: error.description)
        }
    }

    /// The outcome record of an answer, counted by result.
    private func report(_ answer: ConsumptionAnswer, status: String, attempts: Int, detail: String?) -> Outcome {
        self.consumptionAnswers.increment(status)
        if status != "sent" {
            self.logger.warning(
                "consumption answer not sent",
                metadata: [
                    "transactionId": "\(answer.transactionId)", "status": "\(status)", "detail": "\(detail ?? "")",
                ])
        }
        let outcome = ConsumptionOutcome(
            answer: answer, status: status, attempts: attempts, at: Int64(Date().timeIntervalSince1970 * 1000),
            detail: detail)
        return .resolved(
            try! VerifiedTopicRecords.consumptionOutcome(outcome, topics: self.topics, signing: self.signing))
    }
}
