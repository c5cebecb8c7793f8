import Foundation
import TestSupport
import Testing

/// Every service binary stops on a bad setting the way an orchestrator expects: one `critical` log line that names
/// the setting, then exit status 1. Never a crash: an error thrown out of `main` made the runtime write a backtrace
/// for seconds (minutes on a loaded machine) while the process was alive and answered nothing.
@Suite(.tags(.integration), .notInUnitRuns) struct ServiceStartTests {
    static let services = [
        "ingest", "chain-verifier", "entitlement-updater", "event-publisher", "refund-resolver", "customer-api",
        "retention-messaging", "webhook-dispatcher",
    ]

    /// Runs `service` with `environment` added to this process's; its status, whether it exited, and its output.
    static func start(_ service: String, _ environment: [String: String]) async throws -> ProgramResult {
        try await Program.run(
            ServiceProcess.binaries.appendingPathComponent(service), [], environment: environment, errors: .merged)
    }

    @Test(arguments: services) func aBadSettingStopsTheServiceWithStatusOneAndItsReason(_ service: String)
        async throws
    {
        let badLevel = try await Self.start(service, ["LOG_LEVEL": "verbose"])
        #expect(badLevel.exited && badLevel.status == 1, "\(badLevel.output)")
        #expect(
            badLevel.output.contains("\"level\":\"critical\"")
                && badLevel.output.contains("\(service) stopped: LOG_LEVEL must be one of"),
            "\(badLevel.output)")

        // Nothing else set: the first required setting it reads is named.
        let missing = try await Self.start(service, ["LOG_LEVEL": "info"])
        #expect(missing.exited && missing.status == 1, "\(missing.output)")
        #expect(
            missing.output.contains("\(service) stopped:") && missing.output.contains("must be"), "\(missing.output)")
        for result in [badLevel, missing] {
            #expect(!result.output.contains("Program crashed") && !result.output.contains("Fatal error"))
        }
    }

    /// webhook-dispatcher refuses settings that cannot work together: a lease shorter than two request timeouts (a
    /// delivery in flight would be sent again by another replica) and retries whose base exceeds their maximum.
    @Test func webhookDispatcherRefusesSettingsThatCannotWorkTogether() async throws {
        let reachable = [
            "LOG_LEVEL": "info", "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
            "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
        ]
        for (bad, named) in [
            (["WEBHOOK_LEASE_MS": "5000", "WEBHOOK_REQUEST_TIMEOUT_MS": "10000"], "WEBHOOK_LEASE_MS"),
            (["WEBHOOK_RETRY_BASE_MS": "60000", "WEBHOOK_RETRY_MAX_MS": "1000"], "WEBHOOK_RETRY_BASE_MS"),
            (["WEBHOOK_REPLICAS": "0"], "WEBHOOK_REPLICAS"),
        ] {
            let result = try await Self.start("webhook-dispatcher", reachable.merging(bad) { _, new in new })
            #expect(result.exited && result.status == 1, "\(result.output)")
            #expect(
                result.output.contains("webhook-dispatcher stopped:") && result.output.contains(named),
                "\(result.output)")
        }
    }
}
