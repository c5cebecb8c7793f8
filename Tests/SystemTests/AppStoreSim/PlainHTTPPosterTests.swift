@_spi(Testing) import AppStoreSimKit
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import TestSupport
import Testing

/// The sim's light delivery client against a real HTTP/1.1 server on loopback: it reports what the server did as
/// Apple's sender records it (a status, a time-out, a broken connection), keeps one connection for posts one after
/// another, and a time-out or a broken connection never settles the next post.
@Suite(.tags(.integration), .notInUnitRuns) struct PlainHTTPPosterTests {
    @Test func reportsEachOutcomeAndReusesItsConnection() async throws {
        let server = try await MisbehavingServer.start()
        let poster = PlainHTTPPoster()
        let body = ByteBuffer(string: #"{"signedPayload":"x.y.z"}"#)
        let url = { (path: String) in "http://127.0.0.1:\(server.port)\(path)" }

        #expect(await poster.post(body, to: url("/ok"), timeout: .seconds(5)) == .answered(status: 200))
        #expect(await poster.post(body, to: url("/ok"), timeout: .seconds(5)) == .answered(status: 200))
        #expect(await poster.post(body, to: url("/fail"), timeout: .seconds(5)) == .answered(status: 500))
        #expect(server.connections == 1, "posts one after another share a keep-alive connection")
        #expect(server.bodies.allSatisfy { $0 == #"{"signedPayload":"x.y.z"}"# } && server.bodies.count == 3)

        // An answer that never comes: timed out, and the next post is not confused by it.
        #expect(await poster.post(body, to: url("/silent"), timeout: .milliseconds(300)) == .timedOut)
        #expect(await poster.post(body, to: url("/ok"), timeout: .seconds(5)) == .answered(status: 200))
        // The server hangs up without an answer.
        #expect(await poster.post(body, to: url("/hang-up"), timeout: .seconds(5)) == .socketIssue)
        #expect(await poster.post(body, to: url("/ok"), timeout: .seconds(5)) == .answered(status: 200))
        try await server.close()
        // Nobody listens; not a plain http URL.
        let nobody = try LocalComponents.freePortBelowEphemeralRange()
        #expect(await poster.post(body, to: "http://127.0.0.1:\(nobody)/ok", timeout: .seconds(5)) == .socketIssue)
        #expect(await poster.post(body, to: "https://127.0.0.1:\(nobody)/ok", timeout: .seconds(1)) == .socketIssue)

        // Many at once: every one answered.
        let again = try await MisbehavingServer.start()
        let target = "http://127.0.0.1:\(again.port)/ok"
        let outcomes = await withTaskGroup(of: PlainHTTPPoster.Outcome.self) { group in
            for _ in 0..<64 {
                group.addTask { await poster.post(body, to: target, timeout: .seconds(10)) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.count == 64 && outcomes.allSatisfy { $0 == .answered(status: 200) })
        try await again.close()
    }
}

// MARK: - The server

/// An HTTP/1.1 server that answers by path: `/ok` 200, `/fail` 500, `/silent` never, `/hang-up` closes the
/// connection; it counts the connections it accepted and keeps the bodies it received.
final class MisbehavingServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let state = Mutex((connections: 0, bodies: [String]()))

    var connections: Int { self.state.withLock { $0.connections } }
    var bodies: [String] { self.state.withLock { $0.bodies } }

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    static func start() async throws -> MisbehavingServer {
        let port = try LocalComponents.freePortBelowEphemeralRange()
        let counter = Counter()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                counter.connected()
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(AnsweringHandler(counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        let server = MisbehavingServer(channel: channel, port: port)
        counter.server.withLock { $0 = server }
        return server
    }

    func close() async throws {
        try await self.channel.close()
    }

    fileprivate func connected() { self.state.withLock { $0.connections += 1 } }
    fileprivate func received(_ body: String) { self.state.withLock { $0.bodies.append(body) } }
}

/// Reaches the server from its handlers (the server exists only once it is bound).
private final class Counter: Sendable {
    let server = Mutex<MisbehavingServer?>(nil)
    func connected() { self.server.withLock { $0?.connected() } }
    func received(_ body: String) { self.server.withLock { $0?.received(body) } }
}

/// Answers one connection's requests by their path.
private final class AnsweringHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let counter: Counter
    private var path = ""
    private var body = ""

    init(counter: Counter) { self.counter = counter }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.path = head.uri
            self.body = ""
        case .body(let bytes):
            self.body += String(buffer: bytes)
        case .end:
            switch self.path {
            case "/ok", "/fail":
                self.counter.received(self.body)
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: "2")
                let status: HTTPResponseStatus = self.path == "/ok" ? .ok : .internalServerError
                context.write(
                    self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                    promise: nil)
                context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ok")))), promise: nil)
                context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
            case "/hang-up":
                context.close(promise: nil)
            default:
                break  // silent
            }
        }
    }
}
