import Foundation
import Logging
import ServiceLifecycle
import ServiceRuntime
import Storage

/// Deletes the shared real-time answers older than the replay window (and its clock skew) once a minute: a request
/// that old is refused as stale before its answer is looked up, so the row serves nothing. Every replica runs it;
/// their deletes overlap harmlessly. A failure is logged and tried again at the next round.
struct RealtimeAnswersPruning: Service {
    let answers: RealtimeAnswers
    /// How long an answer is kept after its request was first seen.
    let keep: TimeInterval
    var interval: Duration = .seconds(60)
    let logger: Logger

    /// Prunes every ``interval`` until shutdown.
    func run() async throws {
        await runPeriodically(every: self.interval, immediately: true) {
            do {
                try await self.answers.prune(before: Date().addingTimeInterval(-self.keep))
            } catch {
                self.logger.warning("cannot prune the shared real-time answers", metadata: ["error": "\(error)"])
            }
        }
    }
}
