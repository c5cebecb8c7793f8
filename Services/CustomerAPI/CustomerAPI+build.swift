import Hummingbird
import Logging
import PostgresNIO
import Prometheus
import ServiceRuntime
import Storage

/// Builds customer-api: the PostgreSQL client, `/health`, `/ready`, `/metrics`, and the `/v1` routes behind
/// the API key middleware. Tests call this too.
func buildApplication(
    settings: CustomerAPISettings, registry: PrometheusCollectorRegistry, logger: Logger
) throws -> some ApplicationProtocol {
    let database = PostgresClient(configuration: settings.database.clientConfiguration, backgroundLogger: logger)
    let readiness = Readiness()
    readiness.set(true)
    let outcomes = LabelledCounter(registry: registry, namespace: "customer_api", name: "requests", label: "outcome",
                                   help: "customer-api requests by outcome")
    let router = Router(context: CustomerAPIContext.self)
    OperationsRoutes.add(to: router, readiness: readiness, registry: registry)
    let v1 = router.group("v1").add(middleware: APIKeyMiddleware(
        store: APIKeyStore(client: database, logger: logger), cache: AuthenticatedKeyCache(lifetime: settings.keyCacheLifetime),
        limiter: KeyRateLimiter(), outcomes: outcomes))
    CustomerRoutes(lookup: CustomerLookup(client: database, logger: logger), outcomes: outcomes).add(to: v1)
    return Application(
        router: router,
        configuration: ApplicationConfiguration(address: .hostname(settings.http.host, port: settings.http.port), serverName: "customer-api"),
        services: [database],
        logger: logger)
}
