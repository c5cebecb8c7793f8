import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import TestSupport
import Testing

@testable import ServiceRuntime

/// The deadlines of every HTTP door (`HTTP_HEADER_TIMEOUT_MS`, `HTTP_IDLE_TIMEOUT_MS`, `HTTP_BODY_TIMEOUT_MS`), on a
/// real server and a raw socket (a client that trickles its request head is cut off; one that stalls its body gets
/// 408) and on an embedded channel with a clock the test moves (each deadline to the moment, whatever the machine
/// is doing).
@Suite struct RequestDeadlineTests {
    /// The exchange of ``LoopbackSocket``, read until `until` arrives.
    static func exchange(
        port: Int, first: String, pause: Duration, then: String, bound: TimeInterval, until: String = "hello"
    ) async -> String {
        await LoopbackSocket.exchange(port: port, first: first, pause: pause, then: then, bound: bound, until: until)
    }

    /// A route that reads its body as every door does (``Request/bodyBytes(upTo:)``) and answers 408 past the body
    /// deadline, on a server with the given settings.
    static func server(_ http: HTTPSettings) -> some ApplicationProtocol {
        let router = Router()
        router.get("/hello") { _, _ in "hello" }
        router.post("/echo") { request, _ -> Response in
            do {
                let body = try await request.bodyBytes(upTo: 1 << 16)
                return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: body)))
            } catch is BodyDeadlineExceeded {
                return Response(status: .requestTimeout, body: .init(byteBuffer: ByteBuffer(string: "body-timeout")))
            } catch {
                return Response(status: .contentTooLarge)
            }
        }
        return Application(
            router: router, server: http.server, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    @Test func aTrickledHeadIsCutOff() async throws {
        var http = HTTPSettings(host: "127.0.0.1", port: 0)
        http.headerTimeout = .milliseconds(500)
        try await Self.server(http).test(.live) { client in
            let port = try #require(client.port)
            // Half a head, then nothing for five seconds: closed long before the rest comes (the idle timeout is
            // 30 s), so the request is never served.
            let trickled = await Self.exchange(
                port: port, first: "GET /hello HTTP/1.1\r\nHost: x\r\n", pause: .seconds(5),
                then: "\r\n", bound: 5)
            #expect(!trickled.contains("200 OK"), "a head that does not arrive in time is not served: \(trickled)")
        }
    }

    @Test func aStalledBodyGets408AndABodyInTimeIsServed() async throws {
        var http = HTTPSettings(host: "127.0.0.1", port: 0)
        http.bodyTimeout = .milliseconds(300)
        try await Self.server(http).test(.live) { client in
            let port = try #require(client.port)
            let head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n"
            // Five of ten bytes, then nothing for three seconds: answered 408 at the body deadline.
            let stalled = await Self.exchange(
                port: port, first: head + "12345", pause: .seconds(3), then: "67890", bound: 5, until: "body-timeout")
            #expect(stalled.contains("408"), "a body that does not arrive in time gets 408: \(stalled)")
            let whole = await Self.exchange(
                port: port, first: head + "12345", pause: .zero, then: "67890", bound: 5, until: "1234567890")
            #expect(whole.contains("200 OK") && whole.contains("1234567890"), "a body in time is served: \(whole)")
        }
    }

    /// The handler on an embedded channel whose clock the test moves: no dependence on how busy the machine is.
    @Test func theHeadDeadlineRunsUntilTheHeadAndTheIdleTimeoutBetweenRequests() throws {
        let loop = EmbeddedEventLoop()
        let channel = try Self.connected(loop)
        loop.advanceTime(by: .milliseconds(400))
        #expect(channel.isActive, "still within the header deadline")
        try channel.writeInbound(Self.head)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        loop.advanceTime(by: .seconds(5))
        #expect(channel.isActive, "a request that arrived in time is not cut off while it is served")
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        loop.advanceTime(by: .seconds(29))
        #expect(channel.isActive, "a kept-alive connection waits the idle timeout for its next request")
        loop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive, "and is closed after it")

        let silent = try Self.connected(loop)
        loop.advanceTime(by: .milliseconds(600))
        #expect(!silent.isActive, "a new connection without a complete head is closed at the header deadline")
    }

    @Test func aBodyPastItsDeadlineFailsTheReadAndClosesAfterTheAnswer() throws {
        let loop = EmbeddedEventLoop()
        let errors = ErrorRecorder()
        let channel = try Self.connected(loop, recorder: errors)
        try channel.writeInbound(Self.head)
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "12345")))
        loop.advanceTime(by: .milliseconds(1_900))
        #expect(errors.errors.isEmpty, "within the body deadline")
        loop.advanceTime(by: .milliseconds(200))
        #expect(errors.errors.count == 1 && errors.errors.first is BodyDeadlineExceeded, "\(errors.errors)")
        #expect(channel.isActive, "open for the route's answer")
        _ = try channel.readInbound(as: HTTPRequestPart.self)  // the head and the part that came in time
        _ = try channel.readInbound(as: HTTPRequestPart.self)
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "67890")))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil, "what comes later of it is dropped")
        loop.advanceTime(by: .seconds(60))
        #expect(errors.errors.count == 1, "told once")
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .requestTimeout)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        loop.run()
        #expect(!channel.isActive, "closed once the 408 is written")
    }

    @Test func aBodyInTimeHasNoDeadlineWhileServed() throws {
        let loop = EmbeddedEventLoop()
        let errors = ErrorRecorder()
        let channel = try Self.connected(loop, recorder: errors)
        try channel.writeInbound(Self.head)
        loop.advanceTime(by: .milliseconds(1_500))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        loop.advanceTime(by: .seconds(20))
        #expect(errors.errors.isEmpty && channel.isActive, "a whole request is served however long it takes")
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        try channel.writeInbound(Self.head)  // the next request on the kept-alive connection has its own deadline
        loop.advanceTime(by: .milliseconds(2_100))
        #expect(errors.errors.count == 1 && errors.errors.first is BodyDeadlineExceeded, "\(errors.errors)")
    }

    @Test func aDeadlineOfZeroStopsTheServiceAtStart() throws {
        for name in ["HTTP_HEADER_TIMEOUT_MS", "HTTP_BODY_TIMEOUT_MS"] {
            #expect(throws: SettingsError.self, "\(name)=0") {
                try HTTPSettings(EnvironmentSettings([name: "0"]), defaultPort: 8080)
            }
        }
        let settings = try HTTPSettings(EnvironmentSettings(["HTTP_BODY_TIMEOUT_MS": "1500"]), defaultPort: 8080)
        #expect(settings.bodyTimeout == .milliseconds(1_500))
    }

    // MARK: - Helpers

    static let head = HTTPRequestPart.head(HTTPRequest(method: .post, scheme: nil, authority: "x", path: "/"))

    /// A connected embedded channel with the handler (header 500 ms, idle 30 s, body 2 s) and, behind it, `recorder`.
    static func connected(_ loop: EmbeddedEventLoop, recorder: ErrorRecorder = ErrorRecorder()) throws
        -> EmbeddedChannel
    {
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandlers([
            RequestDeadlineHandler(
                headerDeadline: .milliseconds(500), keepAliveDeadline: .seconds(30), bodyDeadline: .seconds(2)),
            recorder,
        ])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }
}

/// Records the errors that reach it (the body deadline's), passing reads on.
final class ErrorRecorder: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    private(set) var errors: [any Error] = []

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.errors.append(error)
    }
}
