import AppStoreAPI
import AppStoreModels
import ArgumentParser
import Foundation
import JWSVerification
import Logging
import PostgresNIO
import Storage

/// `iapctl test-notification`: asks the App Store for a TEST notification and waits until it has arrived:
/// delivered to ingest (Get Test Notification Status says SUCCESS) and, with a database, logged by the updater.
struct TestNotificationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-notification",
        abstract: "Request a TEST notification and wait for it to arrive.",
        discussion: "Uses the App Store Server API settings from the environment. Exit 0 once it arrived, 1 if it did not in time.")

    @Option(help: "Seconds to wait.") var timeout = 60
    @Option(name: .customLong("database-url"), help: "Also wait for the updater to log it (default: $DATABASE_URL when set).")
    var databaseURL: String?

    func run() async throws {
        let logger: Logger = {
            var logger = Logger(label: "iapctl")
            logger.logLevel = .error
            return logger
        }()
        let deadline = ContinuousClock.now + .seconds(self.timeout)
        let databaseURL = self.databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"]
        do {
            let (token, uuid) = try await APIAccess.with(logger: logger) { client -> (String, String) in
                let token = try await client.requestTestNotification()
                StandardStreams.writeOutput("requested: testNotificationToken \(token)")
                while ContinuousClock.now < deadline {
                    let status = try await client.testNotificationStatus(token)
                    let results = status.sendAttempts.compactMap(\.sendAttemptResult)
                    if results.contains("SUCCESS") {
                        return (token, status.notification.payload.notificationUUID ?? "")
                    }
                    if let last = results.last { StandardStreams.writeError("attempt: \(last)") }
                    try await Task.sleep(for: .seconds(1))
                }
                throw TestNotificationTimeout(stage: "delivered to ingest")
            }
            StandardStreams.writeOutput("delivered: notificationUUID \(uuid) (token \(token))")
            if let databaseURL {
                let settings = try DatabaseSettings(url: databaseURL)
                let outcome = try await DatabaseClient.with(settings, logger: logger) { client in
                    try await Self.waitForLog(uuid: uuid, client: client, deadline: deadline, logger: logger)
                }
                StandardStreams.writeOutput("applied: the updater logged it as \(outcome)")
            }
        } catch let timeout as TestNotificationTimeout {
            StandardStreams.writeError("error: the test notification was not \(timeout.stage) within \(self.timeout) s")
            throw ExitCode(1)
        } catch {
            StandardStreams.writeError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// Polls the notification log for the UUID; returns its outcome.
    static func waitForLog(uuid: String, client: PostgresClient, deadline: ContinuousClock.Instant, logger: Logger) async throws -> String {
        while ContinuousClock.now < deadline {
            let rows = try await client.query("SELECT outcome FROM notification_log WHERE notification_uuid = \(uuid)", logger: logger)
            for try await outcome in rows.decode(String.self) where outcome != "pending" { return outcome }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw TestNotificationTimeout(stage: "logged by the updater")
    }
}

/// The test notification did not get as far as `stage` in time.
struct TestNotificationTimeout: Error {
    var stage: String
}
