import ArgumentParser
import Foundation
import Logging
import Storage

/// `iapctl migrate`: brings the database schema up to date. Safe to run from several places at once
/// (an advisory lock serializes them) and again at any time (applied steps are recorded). With `--roles`, it then
/// creates or updates the services' least-privilege roles (``DatabaseRoles``) with the passwords in
/// `ROLE_PASSWORD_ENTITLEMENT_UPDATER`, `ROLE_PASSWORD_CUSTOMER_API` and `ROLE_PASSWORD_EVENT_PUBLISHER`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending database migrations (and grant the services' roles with --roles).")

    @OptionGroup var database: DatabaseOption
    @Flag(
        help:
            "Create or update the roles iap_entitlement_updater, iap_customer_api and iap_event_publisher with only their grants."
    )
    var roles = false

    @Flag(help: "Only check that the schema is at this build's version (exit 3 when it is behind); change nothing.")
    var check = false

    @Option(help: "With --check: wait up to this long for the schema to catch up (a pod's init container).")
    var waitSeconds = 0

    mutating func run() async throws {
        if self.check {
            try await self.checkSchema()
            return
        }
        var passwords: [DatabaseRoles.Service: String] = [:]
        if self.roles {
            for service in DatabaseRoles.Service.allCases {
                guard let password = ProcessInfo.processInfo.environment[service.passwordVariable], password.count >= 12
                else {
                    throw ValidationError("--roles needs \(service.passwordVariable) (at least 12 characters)")
                }
                passwords[service] = password
            }
        }
        let grants = passwords
        do {
            let applied = try await self.database.withClient { client, logger in
                let applied = try await MigrationRunner().migrate(client: client, logger: logger)
                if !grants.isEmpty { try await DatabaseRoles.apply(passwords: grants, client: client, logger: logger) }
                return applied
            }
            StandardStreams.writeOutput(
                applied.isEmpty
                    ? "up to date (version \(Migrations.all.count))"
                    : "applied \(applied.map(String.init).joined(separator: ", ")); now at version \(Migrations.all.count)"
            )
            if !passwords.isEmpty {
                StandardStreams.writeOutput(
                    "roles granted: " + DatabaseRoles.Service.allCases.map(\.role).joined(separator: ", "))
            }
        } catch let usage as ValidationError {
            throw usage
        } catch {
            StandardStreams.writeError("error: \(String(reflecting: error))")
            throw ExitCode(1)
        }
    }

    // MARK: - --check

    /// Exits 0 once the schema is at this build's version; 3 when it is still behind after `--wait-seconds` (the
    /// migrate Job has not run yet); 1 when the database cannot be reached or is ahead of this build.
    private func checkSchema() async throws {
        let expected = Migrations.all.map(\.version)
        let deadline = ContinuousClock.now + .seconds(max(0, self.waitSeconds))
        do {
            let outcome = try await self.database.withClient { client, logger -> String? in
                while true {
                    let applied = try await MigrationRunner().appliedVersions(client: client, logger: logger)
                    if applied == expected { return nil }
                    if applied.count > expected.count || applied != Array(expected.prefix(applied.count)) {
                        return "the schema (versions \(applied)) is not one this build knows (\(expected))"
                    }
                    guard ContinuousClock.now < deadline else {
                        return
                            "behind: at version \(applied.count), this build needs \(expected.count) (run iapctl migrate)"
                    }
                    try await Task.sleep(for: .seconds(2))
                }
            }
            guard let problem = outcome else {
                StandardStreams.writeOutput("schema at version \(expected.count)")
                return
            }
            StandardStreams.writeError("schema \(problem)")
            throw ExitCode(problem.hasPrefix("behind") ? 3 : 1)
        } catch let exit as ExitCode {
            throw exit
        } catch let usage as ValidationError {
            throw usage
        } catch {
            StandardStreams.writeError("error: \(String(reflecting: error))")
            throw ExitCode(1)
        }
    }
}
