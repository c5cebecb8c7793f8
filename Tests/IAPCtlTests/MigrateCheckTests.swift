import Foundation
import Storage
import TestSupport
import Testing

/// `iapctl migrate --check`, the init container that makes pods wait for the migrate Job: against a real
/// PostgreSQL, an empty database is "behind" (exit 3), a migrated one passes with a service's own role, and that
/// role cannot migrate the schema itself.
@Suite(.tags(.integration), .notInUnitRuns) struct MigrateCheckTests {
    static let passwords = [
        "ROLE_PASSWORD_ENTITLEMENT_UPDATER": "updater-password-1", "ROLE_PASSWORD_CUSTOMER_API": "customer-password-1",
        "ROLE_PASSWORD_EVENT_PUBLISHER": "publisher-password-1",
        "ROLE_PASSWORD_RETENTION_MESSAGING": "retention-password-1",
        "ROLE_PASSWORD_WEBHOOK_DISPATCHER": "webhooks-password-1",
    ]

    @Test func anEmptyDatabaseIsBehindAMigratedOnePassesWithAServiceRole() async throws {
        try await withLocalPostgres { url in
            let behind = try await Self.iapctl(["migrate", "--check", "--database-url", url])
            #expect(behind.status == 3)
            #expect(behind.errors.contains("behind: at version 0, this build needs \(Migrations.all.count)"))

            let migrated = try await Self.iapctl(["migrate", "--roles", "--database-url", url], Self.passwords)
            #expect(migrated.status == 0, "\(migrated.errors)")

            for (role, password) in [
                ("iap_customer_api", "customer-password-1"), ("iap_entitlement_updater", "updater-password-1"),
                ("iap_event_publisher", "publisher-password-1"),
            ] {
                let roleURL = url.replacingOccurrences(of: "//postgres@", with: "//\(role):\(password)@")
                let check = try await Self.iapctl([
                    "migrate", "--check", "--wait-seconds", "5", "--database-url", roleURL,
                ])
                #expect(check.status == 0, "\(role): \(check.errors)")
                #expect(check.output == "schema at version \(Migrations.all.count)\n")
            }
            // A service's role reads the history but cannot write it: a pod can wait, never migrate.
            let roleURL = url.replacingOccurrences(of: "//postgres@", with: "//iap_customer_api:customer-password-1@")
            let psql = try await Program.run(
                URL(fileURLWithPath: "/usr/bin/psql"),
                [roleURL, "-v", "ON_ERROR_STOP=1", "-c", "DELETE FROM schema_migrations"], errors: .separate)
            #expect(psql.status != 0)
            #expect(psql.errors.contains("permission denied"))
        }
    }

    /// Runs the built `iapctl`.
    static func iapctl(_ arguments: [String], _ environment: [String: String] = [:]) async throws -> ProgramResult {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "iapctl")
        return try await Program.run(binary, arguments, environment: environment, errors: .separate)
    }
}
