import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import ServiceRuntime

/// The header deadline of ingest's and customer-api's HTTP server (`HTTP_HEADER_TIMEOUT_MS`), on a real server and
/// a raw socket (a client that trickles its request head is cut off) and on an embedded channel with a clock the
/// test moves (the deadline from connecting to the head, the idle timeout between requests).
@Suite struct HeaderDeadlineTests {
    /// Connects to 127.0.0.1:`port`, sends `first`, waits `pause`, sends `then`, and returns what the server wrote
    /// (empty when it closed without answering) within `bound`.
    /// The blocking socket work runs on a thread of its own, never on Swift's cooperative pool (which serves the
    /// server's handlers).
    static func exchange(port: Int, first: String, pause: Duration, then: String, bound: TimeInterval) async -> String {
        await withCheckedContinuation { (answered: CheckedContinuation<String, Never>) in
            Thread.detachNewThread {
                let socket = Socket(port: port)
                defer { socket.close() }
                socket.send(first)
                Thread.sleep(
                    forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18)
                socket.send(then)
                answered.resume(returning: socket.receive(within: bound))
            }
        }
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

/// A blocking TCP client socket on loopback, enough for the test above.
final class Socket {
    private let descriptor: Int32

    init(port: Int) {
        self.descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(self.descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    func send(_ text: String) {
        guard !text.isEmpty else { return }
        _ = text.utf8CString.withUnsafeBufferPointer {
            Glibc.send(self.descriptor, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL))
        }
    }

    /// What arrives until the peer closes, or until `bound` seconds pass after the first bytes or without any.
    func receive(within bound: TimeInterval) -> String {
        var timeout = timeval(tv_sec: Int(bound), tv_usec: 0)
        setsockopt(self.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(self.descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
            if String(decoding: received, as: UTF8.self).contains("hello") { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    func close() { Glibc.close(self.descriptor) }
}
