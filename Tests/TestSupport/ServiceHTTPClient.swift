public import AsyncHTTPClient
public import HTTPTypes
public import NIOCore
import NIOHTTP1

/// Requests to a service a test runs as a process (``ServiceFleet``): a path on its base URL, with `HTTPTypes`
/// fields, answered with the status, headers and body.
public struct ServiceHTTPClient: Sendable {
    /// Where the service listens, e.g. `http://127.0.0.1:8085`.
    public let baseURL: String
    let http: HTTPClient

    public init(baseURL: String, http: HTTPClient = .shared) {
        self.baseURL = baseURL
        self.http = http
    }

    /// Sends one request and collects its whole answer (a hang fails after a minute instead of holding the test).
    public func execute(
        uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil
    ) async throws -> ServiceResponse {
        var request = HTTPClientRequest(url: self.baseURL + uri)
        request.method = HTTPMethod(rawValue: method.rawValue)
        for field in headers { request.headers.add(name: field.name.rawName, value: field.value) }
        if let body { request.body = .bytes(body) }
        let response = try await self.http.execute(request, timeout: .minutes(1))
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return ServiceResponse(
            status: HTTPResponse.Status(code: Int(response.status.code)), headers: fields,
            body: try await response.body.collect(upTo: 1 << 24))
    }
}

/// A service's answer, as ``ServiceHTTPClient`` collected it.
public struct ServiceResponse: Sendable {
    public let status: HTTPResponse.Status
    public let headers: HTTPFields
    public let body: ByteBuffer
}
