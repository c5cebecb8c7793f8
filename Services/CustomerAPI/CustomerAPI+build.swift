import Hummingbird
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Prometheus
import RdKafka
import ServiceLifecycle
import ServiceRuntime
import Storage

/// Builds customer-api: the routers of ``buildRouter(settings:registry:logger:)`` served with its services, the
/// support routes and console on their own listener when `CUSTOMER_API_ADMIN_PORT` names one. Tests call this too.
func buildApplication(
    settings: CustomerAPISettings, registry: PrometheusCollectorRegistry, logger: Logger
) throws -> some ApplicationProtocol {
    let (router, adminRouter, routerServices) = try buildRouter(
        settings: settings, registry: registry, logger: logger)
    var services = routerServices
    if let adminRouter, let adminPort = settings.adminPort {
        services.append(
            Application(
                router: adminRouter, server: settings.http.server,
                configuration: ApplicationConfiguration(
                    address: .hostname(settings.http.host, port: adminPort), serverName: "customer-api-admin"),
                logger: logger))
    }
    return Application(
        router: router,
        server: settings.http.server,
        configuration: ApplicationConfiguration(
            address: .hostname(settings.http.host, port: settings.http.port), serverName: "customer-api"),
        services: services,
        logger: logger)
}

/// The routes of customer-api and the services they need: the PostgreSQL client, `/health`, `/ready`, `/metrics`
/// (unless the operations port serves it), `/openapi.json`, and the `/v1` routes behind the API key middleware;
/// with purchase settings also the producer, the HTTP client of the App Store Server API, the POST of purchases
/// and the support routes. The support routes (`/v1/admin/…`) and the console's files go to `admin`, a router of
/// their own, when settings name an admin port, and to `router` otherwise. Nothing connects until the services
/// run, so the route test reads `router.routes` without a database or broker.
func buildRouter(
    settings: CustomerAPISettings, registry: PrometheusCollectorRegistry, logger: Logger
) throws -> (router: Router<CustomerAPIContext>, admin: Router<CustomerAPIContext>?, services: [any Service]) {
    let database = PostgresClient(configuration: settings.database.clientConfiguration, backgroundLogger: logger)
    let readiness = Readiness()
    readiness.set(true)
    let outcomes = LabelledCounter(
        registry: registry, namespace: "customer_api", name: "requests", label: "outcome",
        help: "customer-api requests by outcome")
    let (router, routeMethods) = makeRouter(settings: settings, registry: registry, outcomes: outcomes)
    let (adminRouter, adminRouteMethods) =
        settings.adminPort == nil
        ? (router, routeMethods) : makeRouter(settings: settings, registry: registry, outcomes: outcomes)
    OperationsRoutes.add(
        to: router, readiness: readiness, registry: registry, metrics: settings.http.operationsPort == nil)
    for (path, type, text) in [
        ("console", "text/html; charset=utf-8", SupportPage.shell),
        ("console.js", "text/javascript; charset=utf-8", SupportPage.script),
        ("console.css", "text/css; charset=utf-8", SupportPage.stylesheet),
    ] {
        adminRouter.get(RouterPath(path)) { _, _ in
            var headers = SupportPage.securityHeaders
            headers[.contentType] = type
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        }
    }
    // docs/openapi.json byte for byte: SwiftPM embeds it at build time (the `openapi.json` resource).
    let openAPIDocument = ByteBuffer(bytes: PackageResources.openapi_json)
    router.get("openapi.json") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: openAPIDocument))
    }
    let directory = APIKeyDirectory(
        store: APIKeyStore(client: database, logger: logger), refresh: settings.keyRefresh, logger: logger)
    let keys = APIKeyMiddleware(
        directory: directory, limiter: KeyedRateLimiter(), outcomes: outcomes,
        concurrency: KeyConcurrency(
            share: settings.keyConcurrency ?? max(1, settings.http.maximumConcurrentRequests / 4)))
    let v1 = router.group("v1").add(middleware: keys)
    let adminV1 = settings.adminPort == nil ? v1 : adminRouter.group("v1").add(middleware: keys)
    let lookup = CustomerLookup(client: database, logger: logger)
    let views = CustomerRoutes(
        lookup: lookup, outcomes: outcomes, defaultEnvironment: settings.defaultLookupEnvironment)
    views.add(to: v1)
    EventFeedRoute(
        feed: EventFeed(
            client: database,
            topics: [
                settings.topics.entitlementChanges, settings.topics.entitlementFamily,
                settings.topics.entitlementRevocations,
            ], logger: logger),
        defaultEnvironment: settings.defaultLookupEnvironment, outcomes: outcomes
    ).add(to: v1)
    AccountTokenRoute(
        owners: AccountTokenOwners(client: database, logger: logger),
        outcomes: outcomes
    )
    .add(to: v1)
    OfferRoute(
        history: OfferHistoryLookup(client: database, logger: logger), key: settings.offers?.key,
        catalog: settings.offerCatalog,
        outcomes: outcomes
    )
    .add(to: v1)
    WebhookRoutes(
        administration: WebhookAdministration(client: database, logger: logger), addresses: settings.webhookAddresses,
        outcomes: outcomes
    ).add(to: adminV1)
    var services: [any Service] = [database, directory]
    var checks: [DependencyProbe.Check] = [
        .init("postgresql", within: .seconds(2)) { try await DatabaseClient.ping(database, logger: logger) },
        .init("api-keys", within: .seconds(1)) {
            guard directory.isLoaded else { throw SettingsError("the API keys have not been read yet") }
        },
    ]
    if let purchases = settings.purchases {
        let http = HTTPClientService()
        let verifiers = try purchases.trust.makeVerifiers(for: purchases.accepted)
        let client = try purchases.api.map {
            try $0.makeClient(http: http.client, verifiers: verifiers, logger: logger)
        }
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(client: purchases.kafka), logger: logger)
        let intake = PurchaseIntake(verifiers: verifiers, purchaseImport: client.map(PurchaseImport.init))
        PurchaseRoutes(
            settings: purchases,
            intake: intake, proofs: DeviceProofs(verifyAppTransaction: intake.verifyAppTransaction),
            producer: producer, lookup: lookup, views: views, outcomes: outcomes, logger: logger
        ).add(to: v1)
        ConsumptionFactsRoute(
            producer: producer, topics: purchases.topics, signing: purchases.signing, database: database,
            applyWait: purchases.applyWait,
            outcomes: outcomes,
            logger: logger
        ).add(to: v1)
        SupportRoutes(
            client: client, purchaseImport: client.map(PurchaseImport.init), producer: producer,
            topics: purchases.topics,
            signing: purchases.signing, lookup: lookup,
            support: SupportLookup(client: database, logger: logger),
            deadLetters: DeadLetters(client: database, logger: logger), outcomes: outcomes
        ).add(to: adminV1)
        services += [http, producer]
        checks.append(.broker(producer))
    } else {
        v1.post("apps/:bundleId/customers/:customer/transactions") { _, _ in
            APIErrorResponse.response(
                .serviceUnavailable, "not-configured", "taking purchases needs APPSTORE_APPS and KAFKA_BROKERS")
        }
        adminV1.get("admin/apps/:bundleId/**") { _, _ in
            APIErrorResponse.response(
                .serviceUnavailable, "not-configured", "the support routes need APPSTORE_APPS and KAFKA_BROKERS")
        }
    }
    services.append(DependencyProbe(checks: checks, readiness: readiness, logger: logger))
    services += OperationsRoutes.listener(settings.http, readiness: readiness, registry: registry, logger: logger)
    routeMethods.fill(from: router)
    guard settings.adminPort != nil else { return (router, nil, services) }
    adminRouteMethods.fill(from: adminRouter)
    return (router, adminRouter, services)
}

/// A router with the middleware every listener of customer-api has: tracing, answer times, the libraries'
/// metrics, 405 for a known path's other methods, and load shedding.
private func makeRouter(
    settings: CustomerAPISettings, registry: PrometheusCollectorRegistry, outcomes: LabelledCounter
) -> (Router<CustomerAPIContext>, RouteMethods) {
    let router = Router(context: CustomerAPIContext.self)
    let routeMethods = RouteMethods()
    if TracingSetup.isOn { router.add(middleware: RequestTracingMiddleware()) }
    router.add(middleware: RequestDurationMiddleware(registry: registry, namespace: "customer_api"))
    // The libraries' view of the same requests (hb_requests_total, hb_request_duration_seconds) through swift-metrics,
    // which each executable's main bootstraps to this registry.
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: MethodNotAllowedMiddleware(routes: routeMethods))
    router.add(
        middleware: LoadSheddingMiddleware(limit: settings.http.maximumConcurrentRequests) {
            outcomes.increment("overloaded")
        })
    return (router, routeMethods)
}
