import AppStoreModels
import Foundation
import Logging
import ServiceLifecycle
import ServiceRuntime
import Storage

/// Runs the renewal-time sweep (``RenewalSweep``) every `interval`: subscriptions still active `margin` after
/// their end get a status request. A failed pass is logged and counted; the next one tries again.
struct RenewalSweeperService: Service {
    let sweep: RenewalSweep
    let interval: Duration
    let margin: Duration
    let batch: Int
    let requests: LabelledCounter
    let logger: Logger

    func run() async throws {
        await runPeriodically(every: self.interval, immediately: false) { await self.sweepOnce() }
    }

    /// One pass: requests for what lapsed more than `margin` ago, at most `batch`.
    func sweepOnce() async {
        let cutoff = Int64((Date().timeIntervalSince1970 - self.margin.timeInterval) * 1000)
        do {
            let written = try await self.sweep.sweep(endedBefore: cutoff, batch: self.batch)
            self.requests.increment("requested", by: written)
            if written > 0 {
                self.logger.info("renewal-time sweep asked for statuses", metadata: ["subscriptions": "\(written)"])
            }
        } catch {
            self.requests.increment("failed")
            self.logger.error("renewal-time sweep failed; the next pass tries again", metadata: ["error": "\(error)"])
        }
    }
}
