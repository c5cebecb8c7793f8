import HTTPTypes
public import Hummingbird
import ServiceContextModule
public import Tracing

/// The span of each HTTP request when tracing is on: continues the caller's `traceparent` (or starts a trace), and
/// runs the rest of the chain inside the span's context, so every record and row the request writes carries the
/// trace and its sampling decision.
///
/// Only a span the sampler keeps gets attributes (method, path, route, status, body sizes) and ends after the
/// response's last byte. A dropped one (99 % at a 1 % rate) is context only: Hummingbird's `TracingMiddleware`
/// built every attribute, recorded headers and wrapped the response body in a closure for it too, which nobody
/// records (3.4 % of ingest's CPU with tracing sampled at 1 %).
///
/// Where the service samples roots at its door (``RootSampling``, ingest), a request that brings no trace the tracer
/// can read is decided here first: dropped, it runs inside a context that only carries its unsampled `traceparent`,
/// with no span at all; kept, the tracer starts its root as below.
public struct RequestTracingMiddleware<Context: RequestContext>: RouterMiddleware {
    private let tracer: any Tracer
    private let rootSampling: RootSampling?

    /// A middleware for `tracer` and `rootSampling`: the ones bootstrapped (``TracingSetup``) unless a test gives
    /// its own.
    public init(
        tracer: any Tracer = InstrumentationSystem.tracer, rootSampling: RootSampling? = TracingSetup.rootSampling
    ) {
        self.tracer = tracer
        self.rootSampling = rootSampling
    }

    /// Runs the rest of the chain inside the request's span.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var parent = ServiceContext.current ?? .topLevel
        let carried = parent.count
        self.tracer.extract(request.headers, into: &parent, using: HTTPFieldsExtractor())
        // Nothing extracted: the request is a root (Apple sends no `traceparent`; a malformed one counts as none).
        if parent.count == carried, let dropped = self.rootSampling?.droppedRoot() {
            let unsampled = TraceHeaders.forwarding(unsampled: dropped, in: parent)
            return try await ServiceContext.$current.withValue(unsampled) { try await next(request, context) }
        }
        let span = self.tracer.startAnySpan("HTTP \(request.method.rawValue)", context: parent, ofKind: .server)
        guard span.isRecording else {
            defer { span.end() }
            return try await ServiceContext.$current.withValue(span.context) { try await next(request, context) }
        }
        return try await Self.recorded(span, request, context, next)
    }

    // MARK: A sampled request

    /// The rest of the chain inside a recording span, which ends once the response body is written (or at once
    /// on an error, which the span records).
    private static func recorded(
        _ span: any Span, _ request: Request, _ context: Context, _ next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        span.updateAttributes { attributes in
            attributes["http.request.method"] = request.method.rawValue
            attributes["url.path"] = request.uri.path
            attributes["http.request.body.size"] = request.headers[.contentLength].flatMap { Int($0) }
        }
        do {
            var response = try await ServiceContext.$current.withValue(span.context) {
                try await next(request, context)
            }
            Self.name(span, request, context)
            span.updateAttributes { attributes in
                attributes["http.response.status_code"] = Int(response.status.code)
                attributes["http.response.body.size"] = response.body.contentLength
            }
            response.body = Self.ending(span, after: response.body)
            return response
        } catch {
            Self.name(span, request, context)
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            span.updateAttributes { $0["http.response.status_code"] = status }
            if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
            span.recordError(error)
            span.end()
            throw error
        }
    }

    /// `body`, ending `span` once it is written (or its writing failed).
    private static func ending(_ span: any Span, after body: ResponseBody) -> ResponseBody {
        ResponseBody(contentLength: body.contentLength) { writer in
            defer { span.end() }
            try await body.write(writer)
        }
    }

    /// Names the span by the route the request took (`POST /notifications`), as OpenTelemetry's HTTP conventions do.
    private static func name(_ span: any Span, _ request: Request, _ context: Context) {
        guard let route = context.endpointPath else { return }
        span.operationName = "\(request.method.rawValue) \(route)"
        span.updateAttributes { $0["http.route"] = route }
    }
}

// MARK: - Carriers

/// Reads trace fields (`traceparent`, `tracestate`) from a request's header fields.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}
