import Logging
import PostgresNIO
import Storage
import TestSupport
import Testing

/// Migrations against a real PostgreSQL server: applied once, in order, safely from several runners at once.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct MigrationTests {
    let logger: Logger = {
        var logger = Logger(label: "migration-test")
        logger.logLevel = .error
        return logger
    }()

    /// The tables of the public schema.
    func tables(_ client: PostgresClient) async throws -> Set<String> {
        var names: Set<String> = []
        let rows = try await client.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'", logger: logger)
        for try await name in rows.decode(String.self) { names.insert(name) }
        return names
    }

    @Test func migrationsApplyOnceAndCreateEveryTable() async throws {
        try await withLocalPostgres { url in
            let settings = try DatabaseSettings(url: url)
            try await DatabaseClient.with(settings, logger: logger) { client in
                let runner = MigrationRunner()
                #expect(try await runner.migrate(client: client, logger: logger) == Array(1...Migrations.all.count))
                #expect(
                    try await runner.migrate(client: client, logger: logger).isEmpty, "a second run applies nothing")
                #expect(
                    try await runner.appliedVersions(client: client, logger: logger) == Array(1...Migrations.all.count))
                let tables = try await tables(client)
                for table in [
                    "schema_migrations", "notification_log", "transactions", "subscriptions", "entitlements", "outbox",
                    "status_requests",
                ] {
                    #expect(tables.contains(table), "missing table \(table)")
                }
            }
        }
    }

    @Test func concurrentRunnersApplyEachMigrationExactlyOnce() async throws {
        try await withLocalPostgres { url in
            let settings = try DatabaseSettings(url: url)
            let logger = self.logger
            let results = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await DatabaseClient.with(settings, logger: logger) {
                            try await MigrationRunner().migrate(client: $0, logger: logger)
                        }
                    }
                }
                return try await group.reduce(into: [[Int]]()) { $0.append($1) }
            }
            #expect(
                results.flatMap { $0 }.sorted() == Array(1...Migrations.all.count),
                "each version applied by exactly one runner")
        }
    }

    @Test func aDatabaseAheadOfThisBuildIsRefused() async throws {
        try await withMigratedDatabase(logger: logger) { client, url in
            try await client.query(
                "INSERT INTO schema_migrations (version, name) VALUES (99, 'from the future')", logger: logger)
            await #expect(throws: StorageError.self) {
                try await MigrationRunner().migrate(client: client, logger: logger)
            }
        }
    }

    @Test func databaseURLsParse() throws {
        let settings = try DatabaseSettings(url: "postgres://app:secret@db.internal:6543/entitlements")
        #expect(settings.host == "db.internal" && settings.port == 6543 && settings.username == "app")
        #expect(settings.password == "secret" && settings.database == "entitlements")
        #expect(try DatabaseSettings(url: "postgres://postgres@127.0.0.1/").database == "postgres")
        #expect(throws: StorageError.self) { try DatabaseSettings(url: "mysql://x@y/z") }
        #expect(throws: StorageError.self) { try DatabaseSettings(url: "not a url") }
    }
}
