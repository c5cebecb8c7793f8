public import PostgresNIO
public import ServiceRuntime
import Logging

extension DependencyProbe.Check {
    /// PostgreSQL answers `SELECT 1` within two seconds.
    public static func database(_ client: PostgresClient, logger: Logger) -> Self {
        Self("postgresql") {
            (try? await withAbandoningDeadline(.seconds(2)) { try await client.query("SELECT 1", logger: logger) }) != nil
        }
    }
}
