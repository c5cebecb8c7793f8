import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import TestSupport
import Testing

@testable import Storage

/// The services' least-privilege roles against a real PostgreSQL: each does its own work with its grants (the
/// updater applies notifications, customer-api reads a customer and declares a token, the publisher marks the
/// outbox) and is refused everything else: customer-api cannot update `entitlements`, the publisher cannot
/// rewrite an event, the updater cannot read API keys.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct DatabaseRolesTests {
    let logger: Logger = {
        var logger = Logger(label: "roles-test")
        logger.logLevel = .error
        return logger
    }()

    /// The URL of `url`'s database as `role`.
    static func url(_ url: String, as role: String, password: String) -> String {
        var components = URLComponents(string: url)!
        components.user = role
        components.password = password
        return components.string!
    }

    /// Whether running `sql` as the client's role is refused for lack of privilege (SQLSTATE 42501).
    static func refused(_ sql: String, client: PostgresClient, logger: Logger) async -> Bool {
        do {
            try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            return false
        } catch let error as PSQLError {
            return error.serverInfo?[.sqlState] == "42501"
        } catch {
            return false
        }
    }

    /// A role's password reaches PostgreSQL only as its SCRAM-SHA-256 verifier: the server's statement log never holds
    /// it, the verifier made here is the one PostgreSQL makes itself for the same password and salt, and a service's
    /// role may not create anything in schema public.
    @Test func passwordsArriveAsScramVerifiersAndNoRoleCreatesInPublic() async throws {
        let logger = self.logger
        try await withLocalPostgresDirectory { url, directory in
            let password = "pw-\(UUID().uuidString)"
            try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) { client in
                try await MigrationRunner().migrate(client: client, logger: logger)
                try await client.query("ALTER SYSTEM SET log_statement = 'all'", logger: logger)
                try await client.query("SELECT pg_reload_conf()", logger: logger)
                try await DatabaseRoles.apply(passwords: [.customerAPI: password], client: client, logger: logger)
                // PostgreSQL's own verifier of another password, recomputed here from its salt.
                let stored = try await client.withConnection { connection in
                    try await connection.query("SET password_encryption = 'scram-sha-256'", logger: logger)
                    try await connection.query("CREATE ROLE scram_check PASSWORD 'check-Pa55word'", logger: logger)
                    var verifiers: [String: String] = [:]
                    for try await (name, verifier) in try await connection.query(
                        "SELECT rolname::text, rolpassword FROM pg_authid WHERE rolname IN ('scram_check', 'iap_customer_api')",
                        logger: logger
                    ).decode((String, String).self) { verifiers[name] = verifier }
                    return verifiers
                }
                let postgres = try #require(stored["scram_check"])
                let parameters = try #require(ScramVerifier.parameters(of: postgres))
                #expect(parameters.iterations == ScramVerifier.iterations)
                #expect(try ScramVerifier.make(password: "check-Pa55word", salt: parameters.salt) == postgres)
                #expect(stored["iap_customer_api"]?.hasPrefix("SCRAM-SHA-256$4096:") == true)
            }
            let log = try String(contentsOf: directory.appendingPathComponent("postgres.log"), encoding: .utf8)
            #expect(log.contains("SCRAM-SHA-256$4096:"), "the statements were logged")
            #expect(!log.contains(password), "the password itself never reached the server")
            try await DatabaseClient.with(
                try DatabaseSettings(url: Self.url(url, as: "iap_customer_api", password: password)), logger: logger
            ) { client in
                #expect(await Self.refused("CREATE TABLE intruder (a int)", client: client, logger: logger))
            }
        }
    }

    @Test func badRolePasswordsAreRefusedBeforeAnythingChanges() {
        #expect(throws: StorageError.self) { try ScramVerifier.make(password: "") }
        #expect(throws: StorageError.self) { try ScramVerifier.make(password: "pässword") }
    }

    @Test func eachServiceDoesItsWorkAndNothingElse() async throws {
        let logger = self.logger
        try await withLocalPostgres { url in
            let passwords = Dictionary(
                uniqueKeysWithValues: DatabaseRoles.Service.allCases.map { ($0, "pw-\($0.rawValue)-0123456789") })
            try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) { client in
                try await MigrationRunner().migrate(client: client, logger: logger)
                try await DatabaseRoles.apply(passwords: passwords, client: client, logger: logger)
                // again: idempotent
                try await DatabaseRoles.apply(passwords: passwords, client: client, logger: logger)
            }
            func settings(_ service: DatabaseRoles.Service) throws -> DatabaseSettings {
                try DatabaseSettings(url: Self.url(url, as: service.role, password: passwords[service]!))
            }

            // The updater applies a whole life cycle with its grants, and cannot read API keys.
            try await DatabaseClient.with(try settings(.entitlementUpdater), logger: logger) { client in
                let repository = EntitlementRepository(client: client, logger: logger)
                for record in VerifiedRecords.lifeCycle(1) {
                    _ = try await repository.apply(record, receivedAt: nil)
                }
                #expect(await Self.refused("SELECT * FROM api_keys", client: client, logger: logger))
                #expect(
                    await Self.refused("CREATE TABLE intruder (id int)", client: client, logger: logger),
                    "the schema belongs to the migrations")
            }
            // customer-api reads the customer and declares a token; it cannot change an entitlement or a binding.
            try await DatabaseClient.with(try settings(.customerAPI), logger: logger) { client in
                let view = try await CustomerLookup(client: client, logger: logger)
                    .view(bundleId: "com.example.app", customer: "s-1", kind: .originalTransactionId, asOf: 0)
                #expect(!view.isEmpty, "its reads suffice")
                let declared = try await AccountTokenOwners(client: client, logger: logger)
                    .declare(
                        token: "0f6f2a4e-8d1c-4b7a-a3e2-6c1d9b5e7f20", appUserId: "u", environment: "Sandbox",
                        bundleId: "com.example.app",
                        keyId: "k")
                #expect(declared == .created)
                #expect(
                    await Self.refused("UPDATE entitlements SET active = true", client: client, logger: logger),
                    "customer-api's role cannot update entitlements")
                #expect(await Self.refused("DELETE FROM customer_bindings", client: client, logger: logger))
                #expect(
                    await Self.refused(
                        "INSERT INTO outbox (event_id, topic, key, payload) VALUES ('e', 't', 'k', '{}')",
                        client: client, logger: logger))
                #expect(await Self.refused("UPDATE api_keys SET revoked_at = NULL", client: client, logger: logger))
            }
            // The publisher appends publications (its cursor); it cannot rewrite or delete an event or a publication,
            // nor read entitlements.
            try await DatabaseClient.with(try settings(.eventPublisher), logger: logger) { client in
                try await client.query(
                    "INSERT INTO outbox_publications (through_xid, through_id, events) VALUES ('1', 1, 0)",
                    logger: logger)
                _ = try await OutboxRelay(client: client, logger: logger).backlog()
                #expect(await Self.refused("UPDATE outbox SET payload = '{}'", client: client, logger: logger))
                #expect(await Self.refused("DELETE FROM outbox", client: client, logger: logger))
                #expect(await Self.refused("DELETE FROM outbox_publications", client: client, logger: logger))
                #expect(await Self.refused("SELECT * FROM entitlements", client: client, logger: logger))
            }
        }
    }
}
