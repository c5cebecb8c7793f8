import AppStoreModels
import AsyncHTTPClient
import JWSVerification
import NIOCore
import NIOHTTP1

/// Asks an OCSP responder over HTTP (RFC 6960 appendix A: a POST of `application/ocsp-request`), for the verifier's
/// online checks. No answer within `timeout`, or a status other than 200, is a failure the verifier reports as
/// retryable. A redirect is such a status: only the responder the certificate names is asked (following it would
/// let whoever answers at the new address, on a network path the certificate never named, give the verdict).
struct HTTPOCSPFetcher: OCSPFetcher {
    let client: HTTPClient
    let timeout: Duration

    /// The process's client for OCSP: the shared event loops, redirects not followed. It lives as long as the
    /// process (a static is never deinitialized, so it is never shut down while a check could use it).
    static let noRedirects = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

    func fetch(request: [UInt8], from uri: String) async throws -> [UInt8] {
        var http = HTTPClientRequest(url: uri)
        http.method = .POST
        http.headers.add(name: "Content-Type", value: "application/ocsp-request")
        http.headers.add(name: "Accept", value: "application/ocsp-response")
        http.body = .bytes(request)
        let response = try await self.client.execute(
            http, timeout: .nanoseconds(Int64(self.timeout.timeInterval * 1e9)))
        guard response.status == .ok else { throw OCSPFetchError(uri: uri, status: Int(response.status.code)) }
        return Array(buffer: try await response.body.collect(upTo: 64 * 1024))
    }
}

/// An OCSP responder that answered with an HTTP error status.
struct OCSPFetchError: Error, CustomStringConvertible {
    let uri: String
    let status: Int
    var description: String { "HTTP \(self.status) from \(self.uri)" }
}
