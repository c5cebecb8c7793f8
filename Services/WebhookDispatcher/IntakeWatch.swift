import Logging
import RdKafka
import ServiceLifecycle
import Synchronization

/// When the dispatcher's consumer group was last seen to have queued every `entitlements.*` record the topics held:
/// the moment the check began. A delivery missing its predecessor is held until a moment like that came after its
/// order wait (``Storage/PredecessorWait``), so a predecessor still unread (another topic, a restart, a rebalance, a
/// member killed before its partitions moved) is queued first.
final class IntakeProgress: Sendable {
    private let caughtUp = Mutex<ContinuousClock.Instant?>(nil)

    /// Notes that every record the topics held at `instant` was queued.
    func caughtUp(at instant: ContinuousClock.Instant) {
        self.caughtUp.withLock { last in
            if last.map({ instant > $0 }) ?? true { last = instant }
        }
    }

    /// How long ago the intake was last seen caught up (nil: never since this replica started).
    func caughtUpAgo(now: ContinuousClock.Instant = .now) -> Duration? {
        self.caughtUp.withLock { $0.map { now - $0 } }
    }
}

/// Asks the brokers, every `interval`, whether the group has queued every record of the three `entitlements.*`
/// topics (``RdKafka/KafkaConsumer/groupHasHandledEverything(in:timeout:)``), and notes in ``IntakeProgress`` the
/// moment each check that said yes began. A failed check notes nothing, so deliveries waiting for a predecessor wait
/// on while the broker is away.
struct IntakeWatch: Service {
    let consumer: KafkaConsumer
    let topics: [String]
    let interval: Duration
    let progress: IntakeProgress
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var failures = 0
            while !Task.isCancelled {
                let began = ContinuousClock.now
                do {
                    if try await self.consumer.groupHasHandledEverything(in: self.topics, timeout: self.interval * 4) {
                        self.progress.caughtUp(at: began)
                    }
                    failures = 0
                } catch {
                    failures += 1
                    if failures == 1 || failures % 60 == 0 {
                        self.logger.warning(
                            "cannot tell whether every entitlements event was queued; deliveries missing their predecessor wait",
                            metadata: ["attempt": "\(failures)", "error": "\(error)"])
                    }
                }
                try? await Task.sleep(until: began + self.interval)
            }
        }
    }
}
