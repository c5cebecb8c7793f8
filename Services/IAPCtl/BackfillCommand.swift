import ArgumentParser
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime

/// `iapctl backfill`: feeds Get Notification History into the raw topic, so the pipeline applies whatever
/// ingest missed (an outage, a lost Kafka write). Duplicates are harmless: the updater dedupes by notificationUUID.
struct BackfillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backfill",
        abstract: "Send notification history (Get Notification History) to the raw topic.",
        discussion: """
            Reads the App Store Server API settings from the environment (APPSTORE_APPS, APPSTORE_ROOT_CERTIFICATES, \
            APPSTORE_API_KEY_FILE, APPSTORE_API_KEY_ID, APPSTORE_API_ISSUER_ID, APPSTORE_API_URL_PRODUCTION, …). Every \
            notification is verified before it is produced. Apple keeps 180 days (production) or 30 days (sandbox). \
            Every configured app is asked in every accepted environment (Production, Sandbox) unless --app or \
            --environment narrow it.
            """)

    @Option(help: "Start of the window (ISO 8601 or epoch ms), inclusive.") var since: String
    @Option(help: "End of the window (ISO 8601 or epoch ms), exclusive; default now.") var until: String?
    @Flag(help: "Only notifications the App Store failed to deliver (and has not delivered since).") var onlyFailures =
        false
    @Option(help: "Only these apps (comma-separated bundle ids; default every app of APPSTORE_APPS).") var app: String?
    @Option(help: "Only these environments (Production, Sandbox; default every accepted one).") var environment: String?
    @Option(
        name: .customLong("bootstrap-servers"),
        help: "Comma-separated host:port list (default KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?

    func run() async throws {
        guard let since = TimeArgument.parse(self.since) else {
            throw ValidationError("--since must be ISO 8601 or epoch milliseconds")
        }
        let until =
            try self.until.map { text -> Date in
                guard let date = TimeArgument.parse(text) else {
                    throw ValidationError("--until must be ISO 8601 or epoch milliseconds")
                }
                return date
            } ?? Date()
        guard since < until else { throw ValidationError("--since must be before --until") }
        let logger = APIAccess.quietLogger
        let topics = PipelineTopics(.process)
        do {
            let report = try await APIAccess.with(logger: logger) { access in
                let scopes = try access.scopes(apps: self.app, environments: self.environment)
                return try await APIAccess.withProducer(
                    self.bootstrapServers, clientID: "iapctl-backfill", logger: logger
                ) { producer in
                    try await NotificationBackfill(
                        client: access.client, producer: producer, topics: topics, scopes: scopes
                    )
                    .run(since: since, until: until, onlyFailures: self.onlyFailures)
                }
            }
            StandardStreams.writeOutput("backfill: \(report)")
        } catch {
            StandardStreams.writeError("error: \(error)")
            throw ExitCode(1)
        }
    }
}
