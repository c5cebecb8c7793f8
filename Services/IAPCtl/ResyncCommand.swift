import AppStoreAPI
import AppStoreModels
import ArgumentParser
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime

/// `iapctl resync`: brings customers the pipeline has not heard of (existing subscribers when a team adopts
/// it, or one customer a support agent doubts) into it: each purchase's whole transaction history (Get
/// Transaction History, every page) as app-purchase records bound to the app user when one is given, and each
/// subscription's status (Get All Subscription Statuses) as a status snapshot, all to the verified topic. The
/// updater applies them like anything else: idempotent, and never moving state backwards.
struct ResyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resync",
        abstract: "Import purchases' history and statuses from the App Store Server API into the pipeline.",
        discussion: """
            One customer: --transaction-id ID [--app-user-id USER]. Many: --file PATH, one entry per line: \
            `[appUserId,]transactionId` or `[appUserId,]receipt` (a StoreKit 1 app or transaction receipt, base64); \
            blank lines and lines starting with # are skipped. Any transaction id of a purchase names it (an \
            originalTransactionId is one). Reads the same App Store settings as the services (APPSTORE_APPS, \
            APPSTORE_ROOT_CERTIFICATES, APPSTORE_API_*) and RECORD_SIGNING_KEYS. Prints a progress line per entry on stderr and a summary; exits 1 \
            when an entry failed (the others are still imported).
            """)

    @Option(help: "The app (default: the first of APPSTORE_APPS).") var app: String?
    @Option(help: "Production or Sandbox (default: Production, then Sandbox for ids Production does not know).")
    var environment: String?
    @Option(help: "A transaction id of the purchase to resync.") var transactionId: String?
    @Option(help: "The app user to bind --transaction-id to.") var appUserId: String?
    @Option(help: "A file of entries (see above).") var file: String?
    @Option(
        help: "A purchase that belongs to another customer: transfer (needs --operator) or refuse (default refuse).")
    var policy: String = "refuse"
    @Option(help: "Who moves purchases with --policy transfer; recorded with each binding it moves (admin:NAME).")
    var `operator`: String?
    @Option(
        name: .customLong("bootstrap-servers"),
        help: "Comma-separated host:port list (default KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    /// One line of work: who, and the ids (from an id, or from a receipt).
    struct Entry {
        var appUserId: String?
        var transactionIds: [String]
        var line: Int
    }

    /// Tallies for the summary.
    struct Tally: CustomStringConvertible {
        var entries = 0
        var transactions = 0
        var statuses = 0
        var failures: [String] = []
        var description: String {
            "\(self.entries) entries, \(self.transactions) transactions, \(self.statuses) subscription statuses, \(self.failures.count) failed"
        }
    }

    func run() async throws {
        guard let onConflict = AppPurchaseRecord.ConflictPolicy(rawValue: self.policy) else {
            throw ValidationError("--policy must be transfer or refuse")
        }
        let proof = self.operator.map { TransferProof.admin(operator: $0) }
        if onConflict == .transfer && (self.operator ?? "").isEmpty {
            throw ValidationError(
                "--policy transfer moves purchases from their owners: name who does it with --operator NAME")
        }
        let environment = try self.environment.map { name -> Environment in
            guard let environment = Environment(rawValue: name), environment.isAppStoreServer else {
                throw ValidationError("--environment must be Production or Sandbox")
            }
            return environment
        }
        let entries = try self.entries()
        guard !entries.isEmpty else { throw ValidationError("give --transaction-id or --file with at least one entry") }
        let logger = APIAccess.quietLogger
        let topics = PipelineTopics(.process)
        let signing: RecordSigningKeys
        do {
            signing = try RecordSigningKeys(.process)
        } catch {
            throw ValidationError("\(error): the updater applies only records signed with the pipeline's key")
        }
        do {
            let tally = try await APIAccess.with(logger: logger) { access in
                let bundleId =
                    try self.app
                    ?? (access.configured.first?.bundleId).orThrow(ValidationError("APPSTORE_APPS names no app"))
                return try await APIAccess.withProducer(
                    self.bootstrapServers, clientID: "iapctl-resync", logger: logger
                ) { producer in
                    await self.resync(
                        entries, bundleId: bundleId, environment: environment, onConflict: onConflict, proof: proof,
                        importer: PurchaseImport(client: access.client), producer: producer, topics: topics,
                        signing: signing)
                }
            }
            StandardStreams.writeOutput("resync: \(tally)")
            for failure in tally.failures { StandardStreams.writeOutput("  failed: \(failure)") }
            if !tally.failures.isEmpty { throw ExitCode(1) }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            StandardStreams.writeError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// Imports every entry; a failed entry is recorded and the others go on.
    func resync(
        _ entries: [Entry], bundleId: String, environment: Environment?, onConflict: AppPurchaseRecord.ConflictPolicy,
        proof: TransferProof?, importer: PurchaseImport, producer: KafkaProducer, topics: PipelineTopics,
        signing: RecordSigningKeys
    ) async -> Tally {
        var tally = Tally()
        for entry in entries {
            tally.entries += 1
            do {
                let request = PurchaseImport.Request(
                    appUserId: entry.appUserId, onConflict: onConflict, transferProof: proof, source: .resync)
                let resynced = try await importer.resync(
                    entry.transactionIds, bundleId: bundleId, environment: environment, request: request,
                    producer: producer, topics: topics, signing: signing)
                tally.transactions += resynced.transactions
                tally.statuses += resynced.statuses
            } catch {
                tally.failures.append("line \(entry.line) (\(entry.transactionIds.first ?? "?")): \(error)")
            }
            StandardStreams.writeError("resync: \(tally.entries)/\(entries.count) \(tally)")
        }
        return tally
    }

    /// The entries of `--transaction-id` and `--file`.
    func entries() throws -> [Entry] {
        var entries: [Entry] = []
        if let id = self.transactionId {
            entries.append(Entry(appUserId: self.appUserId, transactionIds: [id], line: 0))
        }
        guard let file = self.file else { return entries }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw ValidationError("cannot read \(file)")
        }
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let parts = line.split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let (user, value) = parts.count == 2 ? (Optional(parts[0]), parts[1]) : (nil, parts[0])
            let ids: [String]
            if value.allSatisfy(\.isNumber) {
                ids = [value]
            } else if let fromReceipt = AppReceipt.transactionIds(fromBase64: value)
                ?? LegacyReceipt.transactionId(fromBase64: value).map({ [$0] }),
                !fromReceipt.isEmpty
            {
                ids = fromReceipt
            } else {
                throw ValidationError("\(file):\(index + 1): neither a transaction id nor a receipt")
            }
            entries.append(Entry(appUserId: user?.isEmpty == true ? nil : user, transactionIds: ids, line: index + 1))
        }
        return entries
    }
}

extension Optional {
    /// The value, or `error` thrown.
    func orThrow(_ error: @autoclosure () -> any Error) throws -> Wrapped {
        guard let value = self else { throw error() }
        return value
    }
}
