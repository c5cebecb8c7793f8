import AppStoreAPI
import AppStoreModels
import ArgumentParser
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import PostgresNIO
import Storage

/// `iapctl test-notification`: asks the App Store for a TEST notification and waits until it has arrived:
/// delivered to ingest (Get Test Notification Status says SUCCESS) and, with a database, logged by the updater.
struct TestNotificationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-notification",
        abstract: "Request a TEST notification and wait for it to arrive.",
        discussion: """
            Uses the App Store Server API settings from the environment. Asks every configured app in every accepted \
            environment (or those named by --app and --environment), one after the other. Exit 0 once each arrived, \
            1 if one did not in time.
            """)

    @Option(help: "Seconds to wait (for each app and environment).") var timeout = 60
    @Option(help: "Only these apps (comma-separated bundle ids).") var app: String?
    @Option(help: "Only these environments (Production, Sandbox).") var environment: String?
    @Option(
        name: .customLong("database-url"),
        help: "Also wait for the updater to log it (default: $DATABASE_URL when set).")
    var databaseURL: String?

    func run() async throws {
        let logger = APIAccess.quietLogger
        let databaseURL = self.databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"]
        do {
            try await APIAccess.with(logger: logger) { access in
                for scope in try access.scopes(apps: self.app, environments: self.environment) {
                    let client = try access.client.scoped(bundleID: scope.bundleId, environment: scope.environment)
                    try await self.test(client, scope: scope, databaseURL: databaseURL, logger: logger)
                }
            }
        } catch let timeout as TestNotificationTimeout {
            StandardStreams.writeError("error: the test notification was not \(timeout.stage) within \(self.timeout) s")
            throw ExitCode(1)
        } catch {
            StandardStreams.writeError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// Requests one app's test notification in one environment and waits for its delivery (and its log row).
    func test(_ client: AppStoreServerAPIClient, scope: APIScope, databaseURL: String?, logger: Logger) async throws {
        let deadline = ContinuousClock.now + .seconds(self.timeout)
        let token = try await client.requestTestNotification()
        StandardStreams.writeOutput("requested: \(scope): testNotificationToken \(token)")
        var uuid: String?
        while uuid == nil && ContinuousClock.now < deadline {
            // Nil: Apple's 4040008, the token is expired or its status is not available yet (nothing sent so far).
            let status = try await Self.status(of: token, client)
            let results = status?.sendAttempts.compactMap(\.sendAttemptResult) ?? []
            if let status, results.contains("SUCCESS") {
                uuid = status.notification.payload.notificationUUID ?? ""
            } else {
                if let last = results.last { StandardStreams.writeError("attempt: \(last)") }
                try await Task.sleep(for: .seconds(1))
            }
        }
        guard let uuid else { throw TestNotificationTimeout(stage: "delivered to ingest") }
        StandardStreams.writeOutput("delivered: \(scope): notificationUUID \(uuid) (token \(token))")
        if let databaseURL {
            let settings = try DatabaseSettings(url: databaseURL)
            let outcome = try await DatabaseClient.with(settings, logger: logger) { client in
                try await Self.waitForLog(uuid: uuid, client: client, deadline: deadline, logger: logger)
            }
            StandardStreams.writeOutput("applied: \(scope): the updater logged it as \(outcome)")
        }
    }

    /// The token's status, or nil while Apple has none to give yet (``isNotAvailableYet(_:)``).
    static func status(of token: String, _ client: AppStoreServerAPIClient) async throws -> VerifiedHistoryNotification?
    {
        do {
            return try await client.testNotificationStatus(token)
        } catch {
            if Self.isNotAvailableYet(error) { return nil }
            throw error
        }
    }

    /// Whether Get Test Notification Status failed only because there is nothing to report yet: Apple answers
    /// `TestNotificationNotFoundError` (404, 4040008) while the token's status "isn't available", as it is between the
    /// request and the first send attempt. Asked again until the timeout; a token that has expired answers the same
    /// and ends in the timeout's error.
    static func isNotAvailableYet(_ error: AppStoreAPIError) -> Bool {
        error.status == 404 && error.errorCode == APIErrorCode.testNotificationNotFound
    }

    /// Polls the notification log for the UUID; returns its outcome.
    static func waitForLog(uuid: String, client: PostgresClient, deadline: ContinuousClock.Instant, logger: Logger)
        async throws -> String
    {
        while ContinuousClock.now < deadline {
            let rows = try await client.query(
                "SELECT outcome FROM notification_log WHERE notification_uuid = \(uuid)", logger: logger)
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
