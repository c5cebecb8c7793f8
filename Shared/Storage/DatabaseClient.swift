public import Logging
import NIOPosix
import NIOSSL
public import PostgresNIO

/// Runs work against a database with a running client, for tools and tests. Services instead add their
/// `PostgresClient` to their service group, before the services that use it.
public enum DatabaseClient {
    /// Opens one connection as `settings` say (TLS included) and closes it, so that a connection that cannot be
    /// made says why at once: a pool retries quietly and then reports only that it gave up, while this throws
    /// the server's or the TLS library's own reason (`CERTIFICATE_VERIFY_FAILED`, a refused password …).
    public static func check(_ settings: DatabaseSettings, logger: Logger) async throws(StorageError) {
        var tls = PostgresConnection.Configuration.TLS.disable
        do {
            if let configuration = try settings.tls() {
                let context = try NIOSSLContext(configuration: configuration)
                tls = settings.sslMode == .prefer ? .prefer(context) : .require(context)
            }
            let connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(),
                configuration: PostgresConnection.Configuration(
                    host: settings.host, port: settings.port, username: settings.username, password: settings.password,
                    database: settings.database, tls: tls),
                id: 0, logger: logger
            ).get()
            try await connection.close()
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(
                "cannot connect to PostgreSQL at \(settings.host):\(settings.port) (sslmode=\(settings.sslMode.rawValue)): "
                    + String(reflecting: error))
        }
    }

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
