import AppStoreModels
import Entitlements
import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka

/// The entries of one `iapctl resync` run, `concurrency` at a time through one paced API client: each entry
/// imported whole (history as app-purchase records, then statuses as snapshots, acknowledged by the broker)
/// before it is written to the journal; a failed entry is counted and left out of the journal; an interrupt
/// stops new entries and lets those in flight finish.
struct ResyncWork: Sendable {
    let bundleId: String
    let environment: Environment?
    /// What the updater is told about an entry's purchases (its app user, the conflict policy).
    let request: @Sendable (ResyncCommand.Entry) -> PurchaseImport.Request
    let importer: PurchaseImport
    let producer: KafkaProducer
    let topics: PipelineTopics
    let signing: RecordSigner

    /// Tallies for the summary.
    struct Tally: CustomStringConvertible {
        var entries = 0
        var transactions = 0
        var statuses = 0
        var failures: [String] = []
        /// Whether an interrupt stopped the run before every entry was tried.
        var interrupted = false
        var description: String {
            "\(self.entries) entries, \(self.transactions) transactions, \(self.statuses) subscription statuses, \(self.failures.count) failed"
        }
    }

    /// Imports `entries` (what is left of `total`), journaling each finished one, with a progress bar.
    func run(
        _ entries: [ResyncCommand.Entry], total: Int, concurrency: Int, journal: ResyncJournal?,
        interrupt: InterruptSignal
    ) async -> Tally {
        var tally = Tally()
        var progress = ProgressBar(total: total, alreadyDone: total - entries.count)
        await withTaskGroup(of: (ResyncCommand.Entry, Result<PurchaseImport.Resynced, any Error>).self) { group in
            var next = entries.makeIterator()
            /// Starts the next entry unless the run was interrupted or none is left.
            func startNext() -> Bool {
                guard !interrupt.received, let entry = next.next() else { return false }
                group.addTask {
                    do { return (entry, .success(try await self.importEntry(entry))) } catch {
                        return (entry, .failure(error))
                    }
                }
                return true
            }
            for _ in 0..<concurrency where !startNext() { break }
            while let (entry, result) = await group.next() {
                tally.entries += 1
                switch result {
                case .success(let resynced):
                    tally.transactions += resynced.transactions
                    tally.statuses += resynced.statuses
                    do { try journal?.record(entry.text) } catch {
                        tally.failures.append("journal \(journal?.path ?? ""): \(error)")
                    }
                case .failure(let error):
                    tally.failures.append("line \(entry.line) (\(entry.transactionIds.first ?? "?")): \(error)")
                }
                progress.update(done: tally.entries - tally.failures.count, failed: tally.failures.count)
                _ = startNext()
            }
        }
        progress.finish()
        tally.interrupted = tally.entries < entries.count
        return tally
    }

    /// One entry, whole.
    private func importEntry(_ entry: ResyncCommand.Entry) async throws -> PurchaseImport.Resynced {
        try await self.importer.resync(
            entry.transactionIds, bundleId: self.bundleId, environment: self.environment, request: self.request(entry),
            producer: self.producer, topics: self.topics, signing: self.signing)
    }
}
