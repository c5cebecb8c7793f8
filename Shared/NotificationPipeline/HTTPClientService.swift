public import AsyncHTTPClient
import ServiceLifecycle

/// Owns an HTTP client for a service's lifetime: runs until graceful shutdown, then shuts the client down
/// (registered before the services that use it, so it stops after them).
public struct HTTPClientService: Service {
    public let client: HTTPClient

    /// A client on the shared event loops.
    public init() {
        self.client = HTTPClient(eventLoopGroupProvider: .singleton)
    }

    /// Owns a client configured by its service.
    public init(client: HTTPClient) {
        self.client = client
    }

    public func run() async throws {
        try? await gracefulShutdown()
        try await self.client.shutdown()
    }
}
