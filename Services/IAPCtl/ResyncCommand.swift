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
            APPSTORE_ROOT_CERTIFICATES, APPSTORE_API_*) and RECORD_SIGNING_KEYS. Calls are paced under Apple's \
            rate limits (--rate per endpoint per app, a tenth in Sandbox; a 429's Retry-After pauses the endpoint). \
            With --file, every finished entry is written to a journal (--journal, default PATH.done): run the same \
            command again after an interruption (Ctrl-C finishes the entries in flight) and it resumes without \
            repeating them. Prints a progress bar with ETA on stderr and a summary; exits 1 when an entry failed \
            (the others are still imported; a rerun tries the failed ones again), 130 when interrupted.
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
    @Option(
        help: ArgumentHelp(
            "Who vouches for the app user ids given: recorded with each binding (admin:NAME, default "
                + "admin:iapctl-resync); required with --policy transfer."))
    var `operator`: String?
    @Option(
        name: .customLong("bootstrap-servers"),
        help: "Comma-separated host:port list (default KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?
    @Option(
        help:
            "API calls a second per endpoint and app in Production (Apple's limit for history and statuses: 50); Sandbox gets a tenth."
    )
    var rate: Double = 50
    @Option(help: "Entries in flight at once (1–64).") var concurrency = 16
    @Option(help: "The journal of finished entries (default: the --file path with .done appended).") var journal:
        String?

    /// One line of work: who, and the ids (from an id, or from a receipt); `text` is the line as written (what
    /// the journal records).
    struct Entry: Sendable {
        var appUserId: String?
        var transactionIds: [String]
        var line: Int
        var text: String
    }

    func run() async throws {
        guard let onConflict = AppPurchaseRecord.ConflictPolicy(rawValue: self.policy) else {
            throw ValidationError("--policy must be transfer or refuse")
        }
        // The operator's word binds purchases nobody owns yet (the team's own records of who bought what, when it
        // adopts the pipeline): a token-less purchase binds only on proof, and this is the operator's.
        let proof = TransferProof.admin(operator: self.operator.flatMap { $0.isEmpty ? nil : $0 } ?? "iapctl-resync")
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
        guard self.rate > 0, self.rate <= 10_000 else {
            throw ValidationError("--rate must be above 0 and at most 10000")
        }
        guard (1...64).contains(self.concurrency) else { throw ValidationError("--concurrency must be 1 to 64") }
        let entries = try self.entries()
        guard !entries.isEmpty else { throw ValidationError("give --transaction-id or --file with at least one entry") }
        let journal = try (self.journal ?? self.file.map { $0 + ".done" }).map { try ResyncJournal(path: $0) }
        let pending = entries.filter { !(journal?.done.contains($0.text) ?? false) }
        if let journal {
            StandardStreams.writeError(
                "resync: \(entries.count) entries, \(entries.count - pending.count) already done (journal \(journal.path)), "
                    + "\(pending.count) to go at \(Self.format(self.rate)) calls/s per endpoint: at least "
                    + ProgressBar.duration(Double(pending.count) / self.rate))
        }
        let logger = APIAccess.quietLogger
        let topics = PipelineTopics(.process)
        let signing: RecordSigner
        do {
            signing = try RecordSigner(.iapctl, .process)
        } catch {
            throw ValidationError("\(error): the updater applies only records signed with the pipeline's key")
        }
        let pacer = APIRequestPacer(productionRatePerSecond: self.rate)
        let interrupt = InterruptSignal()
        defer { interrupt.stopListening() }
        do {
            let tally = try await APIAccess.with(logger: logger) { access in
                let bundleId =
                    try self.app
                    ?? (access.configured.first?.bundleId).orThrow(ValidationError("APPSTORE_APPS names no app"))
                return try await APIAccess.withProducer(
                    self.bootstrapServers, clientID: "iapctl-resync", logger: logger
                ) { producer in
                    let work = ResyncWork(
                        bundleId: bundleId, environment: environment,
                        request: { entry in
                            PurchaseImport.Request(
                                appUserId: entry.appUserId, onConflict: onConflict, transferProof: proof,
                                source: .resync)
                        },
                        importer: PurchaseImport(client: access.client.paced(by: pacer)), producer: producer,
                        topics: topics, signing: signing)
                    return await work.run(
                        pending, total: entries.count, concurrency: self.concurrency, journal: journal,
                        interrupt: interrupt)
                }
            }
            StandardStreams.writeOutput("resync: \(tally)")
            for failure in tally.failures { StandardStreams.writeOutput("  failed: \(failure)") }
            if tally.interrupted {
                StandardStreams.writeOutput(
                    "resync: interrupted; run the same command again to resume (\(journal?.path ?? "no journal"))")
                throw ExitCode(130)
            }
            if !tally.failures.isEmpty { throw ExitCode(1) }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            StandardStreams.writeError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// `50`, `2.5`.
    static func format(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(format: "%.2f", rate)
    }

    /// The entries of `--transaction-id` and `--file`.
    func entries() throws -> [Entry] {
        var entries: [Entry] = []
        if let id = self.transactionId {
            entries.append(Entry(appUserId: self.appUserId, transactionIds: [id], line: 0, text: id))
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
            entries.append(
                Entry(appUserId: user?.isEmpty == true ? nil : user, transactionIds: ids, line: index + 1, text: line))
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
