public import Hummingbird
public import Logging
public import Prometheus
public import ServiceLifecycle

/// The endpoints every service serves: `/health` (alive), `/ready` (ready for work) and `/metrics`
/// (Prometheus text format).
public enum OperationsRoutes {
    /// Adds the routes to a router; `metrics: false` leaves `/metrics` to the operations port.
    public static func add<Context: RequestContext>(
        to router: Router<Context>, readiness: Readiness, registry: PrometheusCollectorRegistry, metrics: Bool = true
    ) {
        router.get("/health") { _, _ in Self.text("ok\n") }
        router.get("/ready") { _, _ in
            readiness.isReady ? Self.text("ready\n") : Self.text("not ready\n", status: .serviceUnavailable)
        }
        guard metrics else { return }
        router.get("/metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            return Response(
                status: .ok, headers: headers,
                body: .init(byteBuffer: ByteBuffer(bytes: KafkaTrafficMetrics.emit(registry))))
        }
    }

    /// The operations listener of a service with a public port, when its settings name an operations port.
    public static func listener(
        _ http: HTTPSettings, readiness: Readiness, registry: PrometheusCollectorRegistry, logger: Logger
    )
        -> [any Service]
    {
        guard let port = http.operationsPort else { return [] }
        return [
            OperationsListener(host: http.host, port: port, readiness: readiness, registry: registry, logger: logger)
        ]
    }

    /// A plain-text response.
    static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// An HTTP server with only the operations endpoints, for services that serve nothing else.
public enum OperationsServer {
    /// Builds the application; add the service's own services to it and run it.
    public static func build(
        host: String, port: Int, readiness: Readiness, registry: PrometheusCollectorRegistry, services: [any Service],
        logger: Logger
    ) -> some ApplicationProtocol {
        let router = Router()
        OperationsRoutes.add(to: router, readiness: readiness, registry: registry)
        return Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
            services: services, logger: logger)
    }
}
