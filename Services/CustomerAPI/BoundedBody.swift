import Hummingbird
import ServiceRuntime

/// Reads a request body within a size limit, so no route of customer-api waits for a slow or endless body: 413 above
/// the limit (before reading when the length is announced), 408 past the server's body deadline
/// (`HTTP_BODY_TIMEOUT_MS`, ``RequestDeadlineHandler``).
enum BoundedBody {
    /// The whole body, or the refusal to answer with.
    static func read(_ request: Request, limit: Int) async throws(PurchaseRefusal) -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw Self.tooLarge(limit)
        }
        do {
            return try await request.body.collect(upTo: limit)
        } catch is BodyDeadlineExceeded {
            throw PurchaseRefusal(
                status: .requestTimeout, code: "body-timeout", message: "the body did not arrive in time")
        } catch {
            throw Self.tooLarge(limit)
        }
    }

    /// 413 with the limit.
    private static func tooLarge(_ limit: Int) -> PurchaseRefusal {
        PurchaseRefusal(
            status: .contentTooLarge, code: "body-too-large", message: "the body is larger than \(limit) bytes")
    }
}

extension PurchaseRefusal: HTTPResponseError {
    /// The refusal as customer-api's JSON error response (with `Retry-After` when it says when to retry).
    var response: Response {
        var headers = HTTPFields()
        if let wait = self.retryAfter { headers[.retryAfter] = String(wait) }
        return APIErrorResponse.response(self.status, self.code, self.message, headers: headers)
    }

    /// The same response when a route throws the refusal instead of returning it.
    func response(from request: Request, context: some RequestContext) throws -> Response { self.response }
}
