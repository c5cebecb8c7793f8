import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Posts notifications over plain HTTP/1.1 keep-alive connections, all on one event loop, with no task, request
/// object or connection-pool state machine per post: the delivery client of `appstore-sim run --plain-http-client`.
///
/// The end-to-end benchmark runs the sim on the two cores it measures. AsyncHTTPClient took ~0.39 ms of CPU per
/// notification there (2026-11-28, `perf`: 56 % of the sim's samples in AsyncHTTPClient, 19 % in NIO), a tenth of the
/// whole pipeline's, which Apple's own servers never take from a cluster. What Apple's sender does is the same either
/// way: one POST per attempt, its outcome a status, a time-out or a broken connection.
@_spi(Testing) public final class PlainHTTPPoster: Sendable {
    /// How a post ended.
    @_spi(Testing) public enum Outcome: Sendable, Equatable {
        /// The server answered with this status.
        case answered(status: Int)
        /// No whole answer within the time-out (the connection is closed).
        case timedOut
        /// The connection could not be made, or broke before the answer.
        case socketIssue
    }

    private let loop: any EventLoop
    /// Made on the loop by the first post (a loop-bound value can only be made there).
    private let connections: NIOLoopBoundBox<ConnectionPool?>

    /// A poster whose connections live on one event loop of NIO's shared group.
    @_spi(Testing) public init(loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()) {
        self.loop = loop
        self.connections = .makeEmptyBox(valueType: ConnectionPool.self, eventLoop: loop)
    }

    /// Host and port of an `http://host:port/path` URL, and the path with its query; nil for any other URL.
    static func target(of url: String) -> (authority: String, host: String, port: Int, path: String)? {
        guard let parts = URLComponents(string: url), parts.scheme == "http", let host = parts.host, !host.isEmpty
        else { return nil }
        let port = parts.port ?? 80
        let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
        return (
            "\(host):\(port)", host, port, parts.percentEncodedQuery.map { path + "?" + $0 } ?? path
        )
    }

    /// Posts `body` as JSON to `url` (plain http); the answer's body is read and dropped.
    @_spi(Testing) public func post(_ body: ByteBuffer, to url: String, timeout: TimeAmount) async -> Outcome {
        guard let target = Self.target(of: url) else { return .socketIssue }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: target.authority)
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        let post = PendingPost(
            head: HTTPRequestHead(version: .http1_1, method: .POST, uri: target.path, headers: headers), body: body,
            outcome: self.loop.makePromise(of: Outcome.self))
        let connections = self.connections, loop = self.loop
        loop.execute {
            let pool = connections.value ?? ConnectionPool(loop: loop)
            connections.value = pool
            pool.send(post, to: target.host, port: target.port, timeout: timeout)
        }
        // The promise is only ever succeeded.
        return (try? await post.outcome.futureResult.get()) ?? .socketIssue
    }
}

/// One post on its way: what to write and where its outcome goes.
private struct PendingPost: Sendable {
    var head: HTTPRequestHead
    var body: ByteBuffer
    var outcome: EventLoopPromise<PlainHTTPPoster.Outcome>
}

// MARK: - The connections

/// The idle keep-alive connections per host and port. Lives on its event loop only (in a ``NIOLoopBoundBox``).
private final class ConnectionPool {
    let loop: any EventLoop
    private var idle: [String: [PostHandler]] = [:]

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// Sends `post` on an idle connection to `host:port`, or on a new one.
    func send(_ post: PendingPost, to host: String, port: Int, timeout: TimeAmount) {
        let key = "\(host):\(port)"
        let deadline = NIODeadline.now() + timeout
        while let connection = self.idle[key]?.popLast() {
            guard connection.isActive else { continue }
            connection.start(post, deadline: deadline)
            return
        }
        // Every connection lives on this loop, so the handler is only ever touched here.
        let connection = NIOLoopBound(PostHandler(key: key, pool: self), eventLoop: self.loop)
        ClientBootstrap(group: self.loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(connection.value)
                }
            }
            .connect(host: host, port: port)
            .whenComplete { result in
                switch result {
                case .success: connection.value.start(post, deadline: deadline)
                case .failure: post.outcome.succeed(.socketIssue)
                }
            }
    }

    /// Keeps an answered connection for the next post to its host and port.
    func release(_ connection: PostHandler) {
        self.idle[connection.key, default: []].append(connection)
    }

    /// Drops a closed connection from the idle ones.
    func forget(_ connection: PostHandler) {
        self.idle[connection.key]?.removeAll { $0 === connection }
    }
}

/// One connection's post at a time: writes it, and settles it by the answer, the time-out or the connection's end.
private final class PostHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// Host and port, the pool's key.
    let key: String
    private let pool: ConnectionPool
    private var context: ChannelHandlerContext?
    private var inFlight: (outcome: EventLoopPromise<PlainHTTPPoster.Outcome>, timeout: Scheduled<Void>)?
    private var status = 0
    private var keepAlive = true

    init(key: String, pool: ConnectionPool) {
        self.key = key
        self.pool = pool
    }

    /// Whether the connection is still open.
    var isActive: Bool { self.context?.channel.isActive ?? false }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes `post`; unanswered by `deadline`, it timed out and the connection is closed (so a late answer cannot
    /// settle the next post).
    func start(_ post: PendingPost, deadline: NIODeadline) {
        guard let context = self.context, context.channel.isActive else {
            post.outcome.succeed(.socketIssue)
            return
        }
        let timeout = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.settle(.timedOut)
            self.context?.close(promise: nil)
        }
        self.inFlight = (post.outcome, timeout)
        self.status = 0
        self.keepAlive = true
        context.write(self.wrapOutboundOut(.head(post.head)), promise: nil)
        context.write(self.wrapOutboundOut(.body(.byteBuffer(post.body))), promise: nil)
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.status = Int(head.status.code)
            self.keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            guard self.inFlight != nil else { return }
            self.settle(.answered(status: self.status))
            if self.keepAlive { self.pool.release(self) } else { context.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.settle(.socketIssue)
        self.pool.forget(self)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Ends the post in flight, if any, with `outcome`.
    private func settle(_ outcome: PlainHTTPPoster.Outcome) {
        guard let inFlight = self.inFlight else { return }
        self.inFlight = nil
        inFlight.timeout.cancel()
        inFlight.outcome.succeed(outcome)
    }
}
