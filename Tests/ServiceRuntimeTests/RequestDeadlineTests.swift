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

/// The header deadline of ingest's and customer-api's HTTP server (`HTTP_HEADER_TIMEOUT_MS`), on a real server and
/// a raw socket (a client that trickles its request head is cut off) and on an embedded channel with a clock the
/// test moves (the deadline from connecting to the head, the idle timeout between requests).
@Suite struct HeaderDeadlineTests {
    /// The exchange of ``LoopbackSocket``, read until the route's answer ("hello") arrives.
    static func exchange(port: Int, first: String, pause: Duration, then: String, bound: TimeInterval) async -> String {
        await LoopbackSocket.exchange(port: port, first: first, pause: pause, then: then, bound: bound, until: "hello")
    }

    @Test func aTrickledHeadIsCutOff() async throws {
        let router = Router()
        router.get("/hello") { _, _ in "hello" }
        var http = HTTPSettings(host: "127.0.0.1", port: 0)
        http.headerTimeout = .milliseconds(500)
        let app = Application(
            router: router, server: http.server, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            // Half a head, then nothing for five seconds: closed long before the rest comes (the idle timeout is
            // 30 s), so the request is never served.
            let trickled = await Self.exchange(
                port: port, first: "GET /hello HTTP/1.1\r\nHost: x\r\n", pause: .seconds(5),
                then: "\r\n", bound: 5)
            #expect(!trickled.contains("200 OK"), "a head that does not arrive in time is not served: \(trickled)")
        }
    }

    /// The handler on an embedded channel whose clock the test moves: no dependence on how busy the machine is.
    @Test func theDeadlineRunsUntilTheHeadAndTheIdleTimeoutBetweenRequests() throws {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(
            handler: HeaderDeadlineHandler(deadline: .milliseconds(500), keepAliveDeadline: .seconds(30)), loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        loop.advanceTime(by: .milliseconds(400))
        #expect(channel.isActive, "still within the header deadline")
        try channel.writeInbound(
            HTTPRequestPart.head(HTTPRequest(method: .get, scheme: nil, authority: "x", path: "/")))
        loop.advanceTime(by: .seconds(5))
        #expect(channel.isActive, "a head that arrived in time is not cut off while it is served")
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        loop.advanceTime(by: .seconds(29))
        #expect(channel.isActive, "a kept-alive connection waits the idle timeout for its next request")
        loop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive, "and is closed after it")

        let silent = EmbeddedChannel(
            handler: HeaderDeadlineHandler(deadline: .milliseconds(500), keepAliveDeadline: .seconds(30)), loop: loop)
        try silent.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        loop.advanceTime(by: .milliseconds(600))
        #expect(!silent.isActive, "a new connection without a complete head is closed at the header deadline")
    }
}
