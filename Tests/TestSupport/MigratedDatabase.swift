public import Logging
import PipelineRecords
public import PostgresNIO
import Storage

/// A PostgreSQL server of its own for one test with every migration applied, and a running client for it: the
/// one fixture for "a migrated database" (the body also gets the URL, for services started as processes).
public func withMigratedDatabase<T: Sendable>(
    logger: Logger = Logger(label: "test"),
    _ body: @Sendable (_ client: PostgresClient, _ databaseURL: String) async throws -> T
) async throws -> T {
    try await withLocalPostgres { url in
        try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) { client in
            try await MigrationRunner().migrate(client: client, logger: logger)
            return try await body(client, url)
        }
    }
}

/// Applies every migration to the database `settings` names and closes the connection: for tests that start
/// services (in-process or as processes) on a database they did not get from ``withMigratedDatabase(logger:_:)``.
public func migrateDatabase(_ settings: DatabaseSettings, logger: Logger = Logger(label: "test")) async throws {
    _ = try await DatabaseClient.with(settings, logger: logger) {
        try await MigrationRunner().migrate(client: $0, logger: logger)
    }
}

/// Migrates the database `client` reaches and stores `customers` life cycles (``VerifiedRecords/lifeCycle(_:)``)
/// through the updater's own repository: the data the benchmarks measure against. Ends with `VACUUM ANALYZE`, as a
/// database in service has statistics and has vacuumed the rows it wrote long ago: without statistics, the first
/// minute after loading (until autovacuum analyzed the tables) planned the retention look-up as scans, PostgreSQL took
/// 1.1 ms of CPU a request and the p99 at 1,000/s read ~1 s; without the vacuum, autovacuum's first pass over the
/// loaded tables (about 200 ms of one core, a minute after PostgreSQL started) fell inside the measured seconds.
public func storeLifeCycles(_ customers: Int, client: PostgresClient, logger: Logger) async throws {
    try await MigrationRunner().migrate(client: client, logger: logger)
    let repository = EntitlementRepository(client: client, logger: logger)
    for record in (0..<customers).flatMap(VerifiedRecords.lifeCycle) {
        _ = try await repository.apply(record, receivedAt: nil)
    }
    try await client.query("VACUUM ANALYZE", logger: logger)
}
