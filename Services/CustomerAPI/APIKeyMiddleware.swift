import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServiceRuntime
import Storage

/// Authenticates `/v1` requests with a bearer API key (401 without a usable one), keeps each key within its
/// rate (429 with `Retry-After`) and its share of the requests in flight (429 `too-many-in-flight`), and refuses a
/// key of another app than the path names (403), and an app key on the support routes `/v1/admin/…` (403
/// `admin-only`). Keys are held in memory (``APIKeyDirectory``): no request queries PostgreSQL for its key.
///
/// Every key failure (none, malformed, unknown, wrong secret, revoked, expired) gets the same 401 message, so an
/// answer tells a prober nothing about which keys exist; a made-up token costs a dictionary look-up (a hash when its
/// id exists), shares no budget with real keys and cannot lock them out.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = CustomerAPIContext
    /// The one 401 message.
    static let refusal = "a valid API key is required: Authorization: Bearer ck_…"
    let directory: APIKeyDirectory
    let limiter: KeyedRateLimiter
    let outcomes: LabelledCounter
    /// Each key's share of the requests in flight.
    var concurrency = KeyConcurrency(share: 64)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let header = request.headers[.authorization] ?? ""
        guard header.hasPrefix("Bearer ") else {
            self.outcomes.increment("unauthorized")
            return Self.unauthorized()
        }
        let key: APIKey
        switch self.directory.authenticate(String(header.dropFirst(7))) {
        case .key(let found):
            key = found
        case .refused(let refusal):
            self.outcomes.increment("unauthorized-\(refusal)")
            return Self.unauthorized()
        case .loading:
            self.outcomes.increment("unavailable")
            var headers = HTTPFields()
            headers[.retryAfter] = "1"
            return APIErrorResponse.response(
                .serviceUnavailable, "unavailable", "the API keys are being read; retry in a second", headers: headers)
        }
        if let wait = self.limiter.take(keyId: key.keyId, ratePerSecond: key.ratePerSecond) {
            self.outcomes.increment("rate-limited")
            return Self.tooMany(
                "rate-limited", "this key may make \(key.ratePerSecond) requests a second", retryAfter: wait)
        }
        // `/v1/apps/{bundleId}/…` for apps, `/v1/admin/apps/{bundleId}/…` for support (admin keys only).
        let segments = request.uri.path.split(separator: "/").map(String.init)
        let isAdminRoute = segments.count > 1 && segments[1] == "admin"
        if isAdminRoute && !key.isAdmin {
            self.outcomes.increment("forbidden")
            return APIErrorResponse.response(
                .forbidden, "admin-only", "the support routes need a key created with --role admin")
        }
        let bundleId = segments.dropFirst(isAdminRoute ? 3 : 2).first
        guard bundleId == key.bundleId else {
            self.outcomes.increment("forbidden")
            return APIErrorResponse.response(.forbidden, "wrong-app", "this key belongs to \(key.bundleId)")
        }
        guard self.concurrency.enter(key.keyId) else {
            self.outcomes.increment("key-concurrency")
            return Self.tooMany(
                "too-many-in-flight",
                "this key has \(self.concurrency.share) requests in flight; retry when one is answered",
                retryAfter: 1)
        }
        defer { self.concurrency.leave(key.keyId) }
        var context = context
        context.key = key
        return try await next(request, context)
    }

    /// 429 with the JSON error and `Retry-After` in whole seconds (at least one).
    static func tooMany(_ code: String, _ message: String, retryAfter seconds: Double) -> Response {
        var headers = HTTPFields()
        headers[.retryAfter] = String(max(1, Int(seconds.rounded(.up))))
        return APIErrorResponse.response(.tooManyRequests, code, message, headers: headers)
    }

    /// 401 with the JSON error and the bearer challenge: one message whatever was wrong with the key.
    static func unauthorized() -> Response {
        var headers = HTTPFields()
        headers[.wwwAuthenticate] = "Bearer"
        return APIErrorResponse.response(.unauthorized, "unauthorized", Self.refusal, headers: headers)
    }
}
