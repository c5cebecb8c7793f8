public import AsyncHTTPClient
import Foundation

/// Waits until customer-api at `baseURL` (`http://host:port`) accepts `key`: it holds its keys in memory and reads
/// them again every `CUSTOMER_API_KEY_REFRESH_MS`, so a key created while it runs works within that interval. A
/// request with the key is 401 until then (any other answer, 404 or 403 for another app, means it authenticated).
/// Up to `looks` looks 100 ms apart (a count, not a deadline: ``Polling``); throws when it never did.
public func waitUntilCustomerAPIKnows(
    key: String, baseURL: String, http: HTTPClient, looks: Int = 300
) async throws {
    var request = HTTPClientRequest(url: baseURL + "/v1/apps/key-check/customers/key-check")
    request.headers.add(name: "Authorization", value: "Bearer \(key)")
    let known = try await Polling.until(looks: looks, every: .milliseconds(100)) { [request] in
        guard let response = try? await http.execute(request, timeout: .seconds(10)) else { return false }
        _ = try? await response.body.collect(upTo: 1 << 16)
        return response.status.code != 401
    }
    guard known else { throw KeyNotKnown(key: String(key.prefix(19))) }
}

/// customer-api did not accept a key within the wait.
public struct KeyNotKnown: Error, CustomStringConvertible {
    public var key: String
    public var description: String { "customer-api did not accept \(self.key)… after every look" }
}
