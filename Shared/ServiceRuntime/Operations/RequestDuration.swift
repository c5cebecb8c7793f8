public import Hummingbird
public import Prometheus

/// `<namespace>_request_duration_seconds{route,method}`: how long a service takes to answer, per route pattern
/// (`/v1/apps/{bundleId}/customers/{customer}`, never the concrete path, so customer ids stay out of the labels;
/// Hummingbird names a path no route takes `NotFound`). Errors are timed too.
public struct RequestDurationMiddleware<Context: RequestContext>: RouterMiddleware {
    private let registry: PrometheusCollectorRegistry
    private let namespace: String
    private let histograms = MetricCache<DurationHistogram>()
    /// Look-ups answer in milliseconds; purchases wait up to seconds for the updater.
    static var buckets: [Duration] {
        [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
    }

    /// Declares the histogram family in a registry.
    public init(registry: PrometheusCollectorRegistry, namespace: String) {
        self.registry = registry
        self.namespace = namespace
    }

    /// Times the rest of the chain.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            self.record(request, context, since: start)
            return response
        } catch {
            self.record(request, context, since: start)
            throw error
        }
    }

    /// Adds one observation.
    private func record(_ request: Request, _ context: Context, since start: ContinuousClock.Instant) {
        let route = context.endpointPath ?? "unmatched"
        let method = request.method.rawValue
        let histogram = self.histograms.metric(method + " " + route) {
            self.registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(
                    namespace: self.namespace, metricName: "request_duration", unitName: "seconds",
                    helpText: "Time to answer a request, by route pattern and method"),
                labels: [("route", route), ("method", method)], buckets: Self.buckets)
        }
        histogram.record(ContinuousClock.now - start)
    }
}
