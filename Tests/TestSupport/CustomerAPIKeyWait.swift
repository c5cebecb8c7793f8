public import AsyncHTTPClient
import Foundation

/// Waits until customer-api at `baseURL` (`http://host:port`) accepts `key`: it holds its keys in memory and reads
/// them again every `CUSTOMER_API_KEY_REFRESH_MS`, so a key created while it runs works within that interval. A
/// request with the key is 401 until then (any other answer, 404 or 403 for another app, means it authenticated).
/// Throws when it has not within `timeout`.
public func waitUntilCustomerAPIKnows(
    key: String, baseURL: String, http: HTTPClient, timeout: Duration = .seconds(30)
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        var request = HTTPClientRequest(url: baseURL + "/v1/apps/key-check/customers/key-check")
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        if let response = try? await http.execute(request, timeout: .seconds(10)) {
            _ = try? await response.body.collect(upTo: 1 << 16)
            if response.status.code != 401 { return }
        }
        try await Task.sleep(for: .milliseconds(100))
    }
    throw KeyNotKnown(key: String(key.prefix(19)))
}

/// customer-api did not accept a key within the wait.
public struct KeyNotKnown: Error, CustomStringConvertible {
    public var key: String
    public var description: String { "customer-api did not accept \(self.key)… in time" }
}
