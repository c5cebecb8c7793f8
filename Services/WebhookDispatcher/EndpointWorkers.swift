import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import Storage
import Synchronization

/// Keeps one ``EndpointWorker`` running per enabled endpoint until graceful shutdown: reads the endpoints every
/// refresh interval, starts workers for new ones, stops those of endpoints disabled or removed, and hands rotated
/// secrets to the running ones.
struct EndpointWorkers: Service {
    let backlog: WebhookBacklog
    let sender: WebhookSender
    let settings: WebhookDispatcherSettings
    let wakeups: Wakeups
    let metrics: DispatcherMetrics
    let intake: IntakeProgress
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                var running: [String: RunningWorker] = [:]
                var failures = 0
                while !Task.isCancelled {
                    do {
                        let targets = try await self.backlog.targets()
                        failures = 0
                        let ids = Set(targets.map(\.id))
                        for (id, entry) in running where !ids.contains(id) || entry.hasFinished {
                            entry.stop.raise()
                            running[id] = nil
                        }
                        for target in targets {
                            if let entry = running[target.id] {
                                entry.worker.target.value = target
                                continue
                            }
                            let entry = RunningWorker(
                                worker: EndpointWorker(
                                    target: TargetBox(target), backlog: self.backlog, sender: self.sender,
                                    settings: self.settings, signal: self.wakeups.signal(target.id),
                                    metrics: self.metrics, intake: self.intake, logger: self.logger))
                            running[target.id] = entry
                            group.addTask { await entry.run() }
                        }
                    } catch {
                        if Task.isCancelled { break }
                        failures += 1
                        self.logger.warning(
                            "webhook endpoints unavailable, retrying",
                            metadata: ["attempt": "\(failures)", "error": "\(String(reflecting: error))"])
                    }
                    try? await Task.sleep(for: self.settings.endpointRefresh)
                }
            }
        }
    }
}

/// A worker the supervisor started: stopped by its signal, and marked finished when it returns (its endpoint was
/// disabled), so that a later refresh starts a new one if the endpoint is enabled again.
final class RunningWorker: Sendable {
    let worker: EndpointWorker
    let stop = Signal()
    private let finished = Mutex(false)

    init(worker: EndpointWorker) {
        self.worker = worker
    }

    /// Whether the worker has returned.
    var hasFinished: Bool { self.finished.withLock { $0 } }

    /// Runs the worker until it returns or the stop signal is raised.
    func run() async {
        await withTaskGroup(of: Void.self) { pair in
            pair.addTask { await self.worker.run() }
            pair.addTask { await self.stop.wait(upTo: .seconds(86_400 * 365)) }
            await pair.next()
            pair.cancelAll()
        }
        self.finished.withLock { $0 = true }
    }
}

/// Every 15 s: the backlog's size and age as gauges, and delivered deliveries past their keeping time deleted.
struct BacklogHousekeeping: Service {
    let backlog: WebhookBacklog
    let settings: WebhookDispatcherSettings
    let metrics: DispatcherMetrics
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let (pending, oldest) = try await self.backlog.pendingSummary()
                    self.metrics.pending.set(Double(pending))
                    self.metrics.oldestPending.set(oldest)
                    try await self.backlog.prune(
                        deliveredBefore: Date().addingTimeInterval(-self.settings.keepDelivered.inSeconds))
                } catch {
                    if Task.isCancelled { break }
                    self.logger.warning("webhook housekeeping failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(15))
            }
        }
    }
}
