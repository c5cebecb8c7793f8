public import Hummingbird
public import NIOCore

/// The request context of the doors Apple calls (ingest, retention-messaging): Hummingbird's basic context plus
/// the peer's address, which budgets kept per source read through ``TrustedProxies``.
public struct DoorContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The address the connection came from.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}
