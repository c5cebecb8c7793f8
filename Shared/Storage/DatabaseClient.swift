public import Logging
public import PostgresNIO

/// Runs work against a database with a running client, for tools and tests. Services instead add their
/// `PostgresClient` to their service group, before the services that use it.
public enum DatabaseClient {
    /// Asks PostgreSQL `SELECT 1` (the readiness probe of every service that needs it).
    public static func ping(_ client: PostgresClient, logger: Logger) async throws {
        try await client.query("SELECT 1", logger: logger)
    }

    /// Creates a client, runs it, gives it to `body`, and stops it when `body` returns or throws.
    public static func with<T: Sendable>(
        _ settings: DatabaseSettings, logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(configuration: settings.clientConfiguration, backgroundLogger: logger)
        let (started, signal) = AsyncStream.makeStream(of: Void.self)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                signal.finish()
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            for await _ in started {}  // the pool is running (or about to) before the first lease
            await Task.yield()
            return try await body(client)
        }
    }
}
