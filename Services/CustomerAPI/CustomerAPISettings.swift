import ServiceRuntime
import Storage

/// Everything customer-api reads from its environment (see the README's configuration table).
struct CustomerAPISettings: Sendable {
    var http = HTTPSettings(port: 8085)
    var database: DatabaseSettings
    /// How long an authenticated key is trusted without reading it again (a revocation takes effect within it).
    var keyCacheLifetime: Duration = .seconds(5)

    init(database: DatabaseSettings) {
        self.database = database
    }

    /// Reads `DATABASE_URL`, the shared HTTP settings and `CUSTOMER_API_KEY_CACHE_MS`.
    init(_ settings: EnvironmentSettings) throws {
        self.database = try DatabaseSettings(url: settings.requiredString("DATABASE_URL"))
        self.http = try HTTPSettings(settings, defaultPort: 8085)
        self.keyCacheLifetime = try settings.milliseconds("CUSTOMER_API_KEY_CACHE_MS", default: self.keyCacheLifetime)
    }
}
