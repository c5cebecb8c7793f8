import Foundation
import HTTPTypes
import Hummingbird

/// The JSON error body every refusal of customer-api carries: a stable code for programs and a message for people.
struct APIErrorResponse: Encodable {
    var error: String
    var message: String

    /// Keys in a fixed order: the same refusal is the same bytes every time.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// A response with this body and status (and extra headers such as `Retry-After`).
    static func response(_ status: HTTPResponse.Status, _ error: String, _ message: String, headers: HTTPFields = [:])
        -> Response
    {
        var headers = headers
        headers[.contentType] = "application/json"
        let body = (try? Self.encoder.encode(APIErrorResponse(error: error, message: message))) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
