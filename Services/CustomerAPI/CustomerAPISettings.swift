import ServiceRuntime
import Storage

/// Everything customer-api reads from its environment (see the README's configuration table).
struct CustomerAPISettings: Sendable {
    var http = HTTPSettings(port: 8085)
    var database: DatabaseSettings

    init(database: DatabaseSettings) {
        self.database = database
    }

    /// Reads `DATABASE_URL` and the shared HTTP settings.
    init(_ settings: EnvironmentSettings) throws {
        self.database = try DatabaseSettings(url: settings.requiredString("DATABASE_URL"))
        self.http = try HTTPSettings(settings, defaultPort: 8085)
    }
}
