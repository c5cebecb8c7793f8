public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
public import Prometheus
public import ServiceLifecycle

/// The operations endpoints (`/health`, `/ready`, `/metrics`) on a port of their own, served by plain NIO
/// handlers on a dedicated event-loop thread, outside Swift's task queues and the public port's event loops.
/// However busy the public port is (ingest shedding thousands of requests a second runs its Swift tasks on the
/// shared event loops), the kubelet's probe is answered at once: a pod is never reported not-ready for being
/// busy, only when a dependency is down (``Readiness``). The Kubernetes Services expose only the public port.
public struct OperationsListener: Service {
    let host: String
    let port: Int
    let readiness: Readiness
    let registry: PrometheusCollectorRegistry
    let logger: Logger

    public init(host: String, port: Int, readiness: Readiness, registry: PrometheusCollectorRegistry, logger: Logger) {
        self.host = host
        self.port = port
        self.readiness = readiness
        self.registry = registry
        self.logger = logger
    }

    /// Listens until graceful shutdown.
    public func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (readiness, registry) = (self.readiness, self.registry)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 64)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.pipeline.configureHTTPServerPipeline().flatMap {
                        channel.pipeline.addHandler(OperationsHandler(readiness: readiness, registry: registry))
                    }
                }
                .bind(host: self.host, port: self.port).get()
            self.logger.info("operations endpoints listening", metadata: ["port": "\(self.port)"])
            try? await gracefulShutdown()
            try? await channel.close()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }
}

/// Answers one operations request per connection read, synchronously on its event loop.
final class OperationsHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let readiness: Readiness
    let registry: PrometheusCollectorRegistry
    /// The path of the request being read (only touched on the channel's event loop).
    private var path: String?
    private var keepAlive = false

    init(readiness: Readiness, registry: PrometheusCollectorRegistry) {
        self.readiness = readiness
        self.registry = registry
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.path = head.method == .GET ? String(head.uri.split(separator: "?", maxSplits: 1).first ?? "") : nil
            self.keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            let (status, contentType, body) = self.answer(self.path)
            var headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", String(body.count))])
            if !self.keepAlive { headers.add(name: "Connection", value: "close") }
            context.write(
                self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                promise: nil)
            context.write(
                self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            let keepAlive = self.keepAlive
            context.writeAndFlush(self.wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { context.close(promise: nil) }
            }
        }
    }

    /// The status, content type and body for a GET of `path` (nil: not a GET).
    func answer(_ path: String?) -> (HTTPResponseStatus, String, [UInt8]) {
        switch path {
        case "/health": (.ok, "text/plain; charset=utf-8", Array("ok\n".utf8))
        case "/ready":
            self.readiness.isReady
                ? (.ok, "text/plain; charset=utf-8", Array("ready\n".utf8))
                : (.serviceUnavailable, "text/plain; charset=utf-8", Array("not ready\n".utf8))
        case "/metrics": (.ok, "text/plain; version=0.0.4", KafkaTrafficMetrics.emit(self.registry))
        default: (.notFound, "text/plain; charset=utf-8", Array("not found\n".utf8))
        }
    }
}
