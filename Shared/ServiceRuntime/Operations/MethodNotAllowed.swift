public import Hummingbird
import Synchronization

/// The routes of a router, by path pattern, for answering a known path asked with the wrong method.
///
/// Filled once every route is added (``fill(from:)``); the middleware reads it per refused request only.
public final class RouteMethods: Sendable {
    private let patterns = Mutex<[(segments: [Substring], methods: Set<String>)]>([])

    public init() {}

    /// Records every route of `router` (Hummingbird describes a capture as `{name}` and a tail as `**`).
    public func fill<Context>(from router: Router<Context>) {
        var byPath: [String: Set<String>] = [:]
        for route in router.routes { byPath[route.path.description, default: []].insert(route.method.rawValue) }
        self.patterns.withLock { patterns in
            patterns = byPath.map { (Self.segments($0.key), $0.value) }
        }
    }

    /// The methods the routes matching `path` take (empty for an unknown path).
    public func methods(for path: String) -> Set<String> {
        let requested = Self.segments(path)
        return self.patterns.withLock { patterns in
            patterns.filter { Self.matches($0.segments, requested) }.reduce(into: Set<String>()) {
                $0.formUnion($1.methods)
            }
        }
    }

    /// A path's non-empty segments.
    static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    /// Whether a route pattern matches a request's segments.
    static func matches(_ pattern: [Substring], _ path: [Substring]) -> Bool {
        for (index, part) in pattern.enumerated() {
            if part == "**" { return path.count > index }
            guard index < path.count else { return false }
            if part.hasPrefix("{") && part.hasSuffix("}") || part == "*" { continue }
            if part != path[index] { return false }
        }
        return pattern.count == path.count
    }
}

/// Answers a request for a known path with a method it does not take with 405 and the `Allow` header (HTTP's
/// rule; clients and contract tests rely on it) instead of the router's bare 404. Other requests pass untouched.
public struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteMethods

    public init(routes: RouteMethods) {
        self.routes = routes
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = self.routes.methods(for: request.uri.path)
            guard !allowed.isEmpty, !allowed.contains(request.method.rawValue) else { throw error }
            var headers = HTTPFields()
            headers[.allow] = allowed.sorted().joined(separator: ", ")
            headers[.contentType] = "application/json"
            let body =
                #"{"error":"method-not-allowed","message":"this path takes "# + allowed.sorted().joined(separator: ", ")
                + #""}"#
            return Response(
                status: .methodNotAllowed, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
        }
    }
}
