import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Storage
import Webhooks

#if canImport(Glibc)
    import Glibc
#endif

/// Posts one delivery to its endpoint in the Standard Webhooks form: the event's JSON as the body, `webhook-id` the
/// event's id (the same on every attempt and replay, so a receiver deduplicates), signed with each of the endpoint's
/// secrets. Redirects are not followed, and the host's resolved addresses must be allowed by the
/// ``EndpointAddressPolicy`` before anything is sent (no request to the cluster's inside through a registered URL).
struct WebhookSender: Sendable {
    /// What an attempt came to.
    struct Answer: Sendable {
        var status: Int?
        var latencyMs: Int
        var error: String?
        var response: String?
    }

    let client: HTTPClient
    let addresses: EndpointAddressPolicy
    let timeout: Duration

    /// The dispatcher's client: no redirects, enough connections per host for any endpoint's concurrency.
    static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        configuration.decompression = .disabled
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Sends `delivery` to `url` signed with `secrets`.
    func send(_ delivery: ClaimedDelivery, to url: String, secrets: [WebhookSecret]) async -> Answer {
        let start = ContinuousClock.now
        func elapsed() -> Int {
            let duration = ContinuousClock.now - start
            return Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        }
        if let refusal = self.addresses.refusal(of: url) {
            return Answer(status: nil, latencyMs: elapsed(), error: refusal, response: nil)
        }
        if let refusal = await self.refusalOfResolvedAddresses(url) {
            return Answer(status: nil, latencyMs: elapsed(), error: refusal, response: nil)
        }
        let body = Array(delivery.payload.utf8)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "iap-webhook-dispatcher/1")
        for header in StandardWebhookSignature.headers(
            id: delivery.eventId, timestamp: Date(), body: body, secrets: secrets)
        {
            request.headers.add(name: header.name, value: header.value)
        }
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await self.client.execute(request, timeout: .init(self.timeout))
            let snippet = try await response.body.collect(upTo: 4096)
            return Answer(
                status: Int(response.status.code), latencyMs: elapsed(), error: nil,
                response: responseSnippet(Array(snippet.readableBytesView)))
        } catch {
            return Answer(status: nil, latencyMs: elapsed(), error: Self.describe(error), response: nil)
        }
    }

    /// A failure in a few words for the delivery log.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "timed out"
            case .remoteConnectionClosed: return "the connection was closed"
            default: return "\(error)"
            }
        }
        let text = "\(error)"
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "connection refused" }
        return String(text.prefix(200))
    }

    // MARK: - Resolved addresses

    /// Why the URL's host may not be called as it resolves now (a name pointing inside the cluster); nil: it may.
    func refusalOfResolvedAddresses(_ url: String) async -> String? {
        guard !self.addresses.allowsPrivate, let host = URLComponents(string: url)?.host else { return nil }
        let addresses = await Self.resolve(host)
        if addresses.isEmpty { return "\(host) does not resolve" }
        for address in addresses {
            if let refusal = self.addresses.refusal(ofAddress: address) { return "\(host): \(refusal)" }
        }
        return nil
    }

    /// The IPv4 and IPv6 addresses `host` resolves to (getaddrinfo, off the cooperative pool).
    static func resolve(_ host: String) async -> [[UInt8]] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var list: UnsafeMutablePointer<addrinfo>?
                guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else {
                    return continuation.resume(returning: [])
                }
                defer { freeaddrinfo(first) }
                var addresses: [[UInt8]] = []
                var cursor: UnsafeMutablePointer<addrinfo>? = first
                while let entry = cursor {
                    if entry.pointee.ai_family == AF_INET, let raw = entry.pointee.ai_addr {
                        raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                            withUnsafeBytes(of: address.pointee.sin_addr) { addresses.append(Array($0)) }
                        }
                    } else if entry.pointee.ai_family == AF_INET6, let raw = entry.pointee.ai_addr {
                        raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                            withUnsafeBytes(of: address.pointee.sin6_addr) { addresses.append(Array($0)) }
                        }
                    }
                    cursor = entry.pointee.ai_next
                }
                continuation.resume(returning: addresses)
            }
        }
    }
}
