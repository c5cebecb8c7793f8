public import Hummingbird
public import HummingbirdCore
import NIOCore
import Synchronization

/// Sheds load instead of queueing it without limit: at most `limit` requests are handled at once; one more
/// gets 503 with `Retry-After: 1` at once (Apple and well-behaved clients retry), never a hang. The operations
/// endpoints (`/health`, `/ready`, `/metrics`) are always answered, so an overloaded service still says it is
/// alive and ready.
public struct LoadSheddingMiddleware<Context: RequestContext>: RouterMiddleware {
    let limit: Int
    let inFlight: InFlightCounter
    let onShed: @Sendable () -> Void

    public init(limit: Int, inFlight: InFlightCounter = InFlightCounter(), onShed: @escaping @Sendable () -> Void = {})
    {
        self.limit = limit
        self.inFlight = inFlight
        self.onShed = onShed
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        switch request.uri.path {
        case "/health", "/ready", "/metrics": return try await next(request, context)
        default: break
        }
        guard self.inFlight.enter(limit: self.limit) else {
            self.onShed()
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.retryAfter] = "1"
            return Response(
                status: .serviceUnavailable, headers: headers,
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: #"{"error":"overloaded","message":"too many requests in flight; retry later"}"#)))
        }
        defer { self.inFlight.leave() }
        return try await next(request, context)
    }
}

/// How many requests are being handled now: kept by ``LoadSheddingMiddleware``, read by whoever gives it one (ingest
/// sends a lone request's record without waiting for the producer's linger).
public final class InFlightCounter: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// Takes a place when fewer than `limit` are taken; false when full.
    func enter(limit: Int) -> Bool {
        if self.count.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue <= limit { return true }
        self.count.wrappingSubtract(1, ordering: .acquiringAndReleasing)
        return false
    }

    /// Gives a place back.
    func leave() {
        self.count.wrappingSubtract(1, ordering: .acquiringAndReleasing)
    }

    /// The requests in flight.
    public var current: Int { self.count.load(ordering: .acquiring) }
}

extension HTTPSettings {
    /// The HTTP/1 server with these settings' idle timeout, header deadline and body deadline
    /// (``RequestDeadlineHandler``).
    public var server: HTTPServerBuilder {
        .http1(
            configuration: HTTP1Channel.Configuration(
                additionalChannelHandlers: [
                    RequestDeadlineHandler(
                        headerDeadline: TimeAmount(self.headerTimeout), keepAliveDeadline: TimeAmount(self.idleTimeout),
                        bodyDeadline: TimeAmount(self.bodyTimeout))
                ],
                idleTimeout: TimeAmount(self.idleTimeout)))
    }
}
