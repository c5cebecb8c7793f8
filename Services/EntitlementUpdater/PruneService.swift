import Foundation
import Logging
import NotificationPipeline
import ServiceLifecycle
import ServiceRuntime
import Storage

/// Prunes what the pipeline no longer needs (``Pruning``) every `PRUNE_INTERVAL`, in bounded batches. A failed pass
/// is logged and counted; the next one goes on where it stopped (what is left is still older than its window).
struct PruneService: Service {
    let pruning: Pruning
    let settings: PruneSettings
    /// Rows removed, by table; failed passes as `failed`.
    let removed: LabelledCounter
    let logger: Logger

    func run() async throws {
        await runPeriodically(every: self.settings.interval, immediately: false) { await self.pruneOnce() }
    }

    /// One pass over every table.
    func pruneOnce() async {
        let removed = self.removed
        do {
            let totals = try await self.pruning.prune(
                windows: self.settings.windows, batch: self.settings.batch,
                removed: { table, count in removed.increment(table.rawValue, by: count) })
            if totals.values.contains(where: { $0 > 0 }) {
                self.logger.info(
                    "pruned", metadata: .init(uniqueKeysWithValues: totals.map { ($0.key.rawValue, "\($0.value)") }))
            }
        } catch {
            removed.increment("failed")
            self.logger.error("pruning failed; the next pass goes on", metadata: ["error": "\(error)"])
        }
    }
}
