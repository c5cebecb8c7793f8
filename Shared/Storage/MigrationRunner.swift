public import Logging
public import PostgresNIO

/// Applies pending migrations under a PostgreSQL advisory lock, so several replicas (or a migration Job
/// and a service) may start at once: one applies, the others wait and then find nothing to do.
public struct MigrationRunner: Sendable {
    /// The advisory lock key (an arbitrary constant for this product's schema).
    static let lockKey: Int64 = 0x4150_5053_544F_5245
    public let migrations: [any DatabaseMigration]

    /// A runner for the given migrations (default: all of them).
    public init(migrations: [any DatabaseMigration] = Migrations.all) {
        self.migrations = migrations
    }

    /// Applies what is pending and returns the versions it applied (empty when up to date).
    ///
    /// - Throws: ``StorageError`` when the database records versions this runner does not know, or out of order.
    @discardableResult
    public func migrate(client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
            do {
                let applied = try await self.applyPending(on: connection, logger: logger)
                try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                throw error
            }
        }
    }

    /// The versions recorded in the database, in order.
    public func appliedVersions(client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withConnection { try await Self.recordedVersions(on: $0, logger: logger) }
    }

    /// Creates the history table if needed, checks the history, and applies each pending step.
    private func applyPending(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        let recorded = try await Self.recordedVersions(on: connection, logger: logger)
        let known = self.migrations.map(\.version)
        guard known == Array(stride(from: 1, through: known.count, by: 1)) else {
            throw StorageError("migration versions must be 1…n without gaps, found \(known)")
        }
        guard recorded == Array(known.prefix(recorded.count)) else {
            throw StorageError(
                "the database has migrations \(recorded), this build knows \(known): it is newer or diverged")
        }
        var applied: [Int] = []
        for migration in self.migrations.dropFirst(recorded.count) {
            try await connection.withTransaction(logger: logger) { transaction in
                try await migration.apply(on: transaction, logger: logger)
                try await transaction.query(
                    "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                    logger: logger)
            }
            logger.info(
                "applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            applied.append(migration.version)
        }
        return applied
    }

    /// Reads the history table.
    private static func recordedVersions(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
        var present = false
        for try await (value) in exists.decode(Bool.self) { present = value }
        guard present else { return [] }
        var versions: [Int] = []
        for try await (version) in try await connection.query(
            "SELECT version FROM schema_migrations ORDER BY version", logger: logger
        )
        .decode(Int.self) {
            versions.append(version)
        }
        return versions
    }
}
