import AppStoreModels
import Foundation
import Logging
import NotificationPipeline
import ServiceLifecycle
import ServiceRuntime

/// The periodic reconciler: every `interval`, backfills the notifications Apple failed to deliver in the
/// last `window` (Get Notification History with `onlyFailures`) into the raw topic. Duplicates are harmless,
/// so overlapping windows are fine. A failed run is logged and counted; the next one tries again.
struct ReconcilerService: Service {
    let backfill: NotificationBackfill
    let interval: Duration
    let window: Duration
    let runs: LabelledCounter
    let logger: Logger

    func run() async throws {
        await runPeriodically(every: self.interval, immediately: true) { await self.reconcileOnce() }
    }

    /// One run over the window ending now.
    func reconcileOnce() async {
        let until = Date()
        let since = until.addingTimeInterval(-self.window.timeInterval)
        do {
            let report = try await self.backfill.run(since: since, until: until, onlyFailures: true)
            self.runs.increment("succeeded")
            self.logger.info(
                "reconciled failed deliveries",
                metadata: ["notifications": "\(report.notifications)", "pages": "\(report.pages)"])
        } catch {
            self.runs.increment("failed")
            self.logger.error("reconciliation failed; the next run tries again", metadata: ["error": "\(error)"])
        }
    }
}
