import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import ServiceRuntime
import Storage

/// Reports consumption requests whose 12-hour window closed without an answer: every `interval` the ones still
/// pending past their deadline become `missed`, counted in `entitlement_updater_consumption_requests_total{status="missed"}`
/// and logged, never silently dropped.
struct ConsumptionDeadlineWatch: Service {
    let client: PostgresClient
    let interval: Duration
    let statuses: LabelledCounter
    let logger: Logger

    func run() async throws {
        await runPeriodically(every: self.interval, immediately: false) { await self.checkOnce() }
    }

    /// One pass.
    func checkOnce() async {
        do {
            let missed = try await ConsumptionRequests.markMissed(
                now: Int64(Date().timeIntervalSince1970 * 1000), client: self.client, logger: self.logger)
            guard missed > 0 else { return }
            self.statuses.increment("missed", by: missed)
            self.logger.warning(
                "consumption requests missed their 12-hour deadline", metadata: ["requests": "\(missed)"])
        } catch {
            self.logger.error(
                "consumption deadline check failed; the next pass tries again", metadata: ["error": "\(error)"])
        }
    }
}
