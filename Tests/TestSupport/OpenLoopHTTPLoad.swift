import Foundation
public import NIOCore
public import NIOHTTP1
import NIOPosix

/// One request of an open-loop load: method, path, headers and body, built once before the load starts.
public struct OpenLoopRequest: Sendable {
    public var head: HTTPRequestHead
    public var body: ByteBuffer?

    /// A request to `path` with `headers` (Content-Length is added; ``OpenLoopHTTPLoad`` adds Host).
    public init(method: HTTPMethod, path: String, headers: HTTPHeaders = [:], body: ByteBuffer? = nil) {
        var headers = headers
        if let body { headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes)) }
        self.head = HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)
        self.body = body
    }

    /// The request with a Host header naming `authority`, unless it has one.
    func addressed(to authority: String) -> Self {
        guard !self.head.headers.contains(name: "Host") else { return self }
        var request = self
        request.head.headers.add(name: "Host", value: authority)
        return request
    }
}

/// An open-loop HTTP/1.1 load generator on one event-loop thread: request `i` is due at start + i / rate and its
/// latency counts from then, whether a connection was free or not. Requests wait for a free keep-alive connection
/// (up to `maximumConnections` are opened as they are needed).
///
/// The benchmarks share two cores with the server they measure. AsyncHTTPClient, a task per request, took ~0.6 of a
/// core at 1,000 requests/s on the 2026-11-28 machine, more than the bare server it measured (~0.3); this takes a
/// fraction of that, so the figures are the server's, not the load generator's.
public enum OpenLoopHTTPLoad {
    /// Host, port and path (with its query) of an `http://host:port/path` URL.
    public static func target(of url: String) throws -> (host: String, port: Int, path: String) {
        guard let parts = URLComponents(string: url), parts.scheme == "http", let host = parts.host,
            let port = parts.port
        else { throw OpenLoopTargetError(url: url) }
        let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
        return (host, port, parts.percentEncodedQuery.map { path + "?" + $0 } ?? path)
    }

    /// Offers `warmUp` requests at `rate` per second to `host:port`, uncounted, then `count` more on the same
    /// connections, counted: request `i` is `requests[i % requests.count]`, and `accept` judges each answer by status
    /// and body bytes. A request unanswered `timeout` after the last one was due is an error.
    public static func run(
        host: String, port: Int, requests: [OpenLoopRequest], rate: Double, warmUp: Int = 0, count: Int,
        maximumConnections: Int = 256, timeout: TimeAmount = .seconds(10),
        accept: @escaping @Sendable (HTTPResponseStatus, Int) -> Bool
    ) async throws -> OpenLoopLatencies {
        try await self.runWithWarmUp(
            host: host, port: port, requests: requests, rate: rate, warmUp: warmUp, count: count,
            maximumConnections: maximumConnections, timeout: timeout, accept: accept
        ).measured
    }

    /// ``run(host:port:requests:rate:warmUp:count:maximumConnections:timeout:accept:)``, returning the warm-up's
    /// latencies too (a service's first seconds under load, which the measured figures leave out).
    public static func runWithWarmUp(
        host: String, port: Int, requests: [OpenLoopRequest], rate: Double, warmUp: Int, count: Int,
        maximumConnections: Int = 256, timeout: TimeAmount = .seconds(10),
        accept: @escaping @Sendable (HTTPResponseStatus, Int) -> Bool
    ) async throws -> (warmUp: OpenLoopLatencies, measured: OpenLoopLatencies) {
        precondition(!requests.isEmpty && rate > 0)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let driver = LoadDriver(
            loop: loop, host: host, port: port, requests: requests.map { $0.addressed(to: "\(host):\(port)") },
            rate: rate, maximumConnections: maximumConnections, timeout: timeout, accept: accept)
        // The driver settles every request itself (an error is a figure, not a failure), so these cannot throw.
        let first = try await loop.flatSubmit { driver.load(count: warmUp, first: 0) }.get()
        let result = try await loop.flatSubmit { driver.load(count: count, first: warmUp) }.get()
        try await loop.submit { driver.close() }.get()
        try await group.shutdownGracefully()
        return (first, result)
    }
}

/// A URL the load generator cannot aim at (it speaks plain HTTP/1.1 to a host and port).
public struct OpenLoopTargetError: Error, CustomStringConvertible {
    public var url: String
    public var description: String { "not an http://host:port/path URL: \(self.url)" }
}

// MARK: - The driver

/// The load's state. Every method runs on `loop` (the load's only thread), so nothing here is locked.
private final class LoadDriver: @unchecked Sendable {
    let loop: any EventLoop
    let host: String
    let port: Int
    let requests: [OpenLoopRequest]
    let rate: Double
    let maximumConnections: Int
    let timeout: TimeAmount
    let accept: @Sendable (HTTPResponseStatus, Int) -> Bool

    private var result = OpenLoopLatencies()
    /// This load's requests (counted from 0) and the first of them in `requests`.
    private var count = 0
    private var first = 0
    /// Which load a scheduled task belongs to (a warm-up's watchdog must not end the next load).
    private var generation = 0
    private var started = NIODeadline.now()
    private var finished = 0
    /// Requests due while every connection was busy, oldest first (`waitingHead` is the next).
    private var waiting: [Int] = []
    private var waitingHead = 0
    private var idle: [any Channel] = []
    private var connections = 0
    private var open: [ObjectIdentifier: any Channel] = [:]
    private var done: EventLoopPromise<OpenLoopLatencies>?

    init(
        loop: any EventLoop, host: String, port: Int, requests: [OpenLoopRequest], rate: Double,
        maximumConnections: Int, timeout: TimeAmount, accept: @escaping @Sendable (HTTPResponseStatus, Int) -> Bool
    ) {
        self.loop = loop
        self.host = host
        self.port = port
        self.requests = requests
        self.rate = rate
        self.maximumConnections = maximumConnections
        self.timeout = timeout
        self.accept = accept
    }

    /// Starts a load of `count` requests from `requests[first]` on the connections the last one left; the future is
    /// its result once every request is settled.
    func load(count: Int, first: Int) -> EventLoopFuture<OpenLoopLatencies> {
        let done = self.loop.makePromise(of: OpenLoopLatencies.self)
        self.done = done
        self.result = OpenLoopLatencies()
        self.count = count
        self.first = first
        self.finished = 0
        self.generation += 1
        self.started = .now()
        if count == 0 { self.finish() } else { self.fire(0, generation: self.generation) }
        return done.futureResult
    }

    /// Closes every connection.
    func close() {
        let channels = Array(self.open.values)
        self.open.removeAll()
        self.idle.removeAll()
        for channel in channels { channel.close(promise: nil) }
    }

    /// When request `index` is due.
    private func due(_ index: Int) -> NIODeadline {
        self.started + .nanoseconds(Int64(Double(index) / self.rate * 1e9))
    }

    /// Sends request `index` (or queues it) and schedules the next; after the last, the watchdog.
    private func fire(_ index: Int, generation: Int) {
        guard generation == self.generation else { return }
        if let channel = self.idle.popLast() {
            self.send(index, on: channel)
        } else {
            self.waiting.append(index)
            if self.connections < self.maximumConnections { self.connect() }
        }
        let next = index + 1
        if next < self.count {
            self.loop.scheduleTask(deadline: self.due(next)) { self.fire(next, generation: generation) }
        } else {
            self.loop.scheduleTask(deadline: self.due(index) + self.timeout) { self.giveUp(generation: generation) }
        }
    }

    /// The next waiting request, if any.
    private func nextWaiting() -> Int? {
        guard self.waitingHead < self.waiting.count else { return nil }
        defer {
            self.waitingHead += 1
            if self.waitingHead > 1024 && self.waitingHead * 2 > self.waiting.count {
                self.waiting.removeFirst(self.waitingHead)
                self.waitingHead = 0
            }
        }
        return self.waiting[self.waitingHead]
    }

    private func send(_ index: Int, on channel: any Channel) {
        let request = self.requests[(self.first + index) % self.requests.count]
        channel.writeAndFlush(
            OutgoingRequest(index: index, generation: self.generation, request: request), promise: nil)
    }

    // MARK: Connections

    private func connect() {
        self.connections += 1
        ClientBootstrap(group: self.loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(AnswerHandler(driver: self))
                }
            }
            .connect(host: self.host, port: self.port)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    self.open[ObjectIdentifier(channel)] = channel
                    self.ready(channel)
                case .failure:
                    self.connections -= 1
                    // One waiting request fails for each connection that could not be made, so a dead server ends
                    // the load instead of being retried forever.
                    if let index = self.nextWaiting() { self.settle(index, ok: false) }
                }
            }
    }

    /// A connection is free: it takes the oldest waiting request, or waits for the next.
    fileprivate func ready(_ channel: any Channel) {
        if let index = self.nextWaiting() { self.send(index, on: channel) } else { self.idle.append(channel) }
    }

    /// A connection closed; its request, if one was in flight, failed.
    fileprivate func closed(_ channel: any Channel, inFlight: (index: Int, generation: Int)?) {
        guard self.open.removeValue(forKey: ObjectIdentifier(channel)) != nil else { return }
        self.connections -= 1
        self.idle.removeAll { $0 === channel }
        if let inFlight, inFlight.generation == self.generation { self.settle(inFlight.index, ok: false) }
        if self.waitingHead < self.waiting.count && self.connections < self.maximumConnections { self.connect() }
    }

    // MARK: Results

    fileprivate func answered(_ request: (index: Int, generation: Int), ok: Bool, on channel: any Channel) {
        if request.generation == self.generation { self.settle(request.index, ok: ok) }
        self.ready(channel)
    }

    /// Counts request `index` of this load.
    private func settle(_ index: Int, ok: Bool) {
        guard self.finished < self.count else { return }
        let latency = NIODeadline.now() - self.due(index)
        self.result.record(
            ok: ok, micros: UInt64(max(0, latency.nanoseconds / 1000)), second: Int(Double(index) / self.rate))
        self.finished += 1
        if self.finished == self.count { self.finish() }
    }

    /// The time is up: whatever is unanswered failed.
    private func giveUp(generation: Int) {
        guard generation == self.generation, self.finished < self.count else { return }
        self.result.errors += self.count - self.finished
        self.finished = self.count
        self.finish()
    }

    private func finish() {
        self.result.elapsed = Double((NIODeadline.now() - self.started).nanoseconds) / 1e9
        self.waiting.removeAll()
        self.waitingHead = 0
        self.done?.succeed(self.result)
        self.done = nil
    }
}

/// What the driver writes: a request, with the index (of its load) its answer settles.
private struct OutgoingRequest {
    var index: Int
    var generation: Int
    var request: OpenLoopRequest
}

/// Turns a connection's answers into settled requests: status and body bytes of each, then the connection is free.
private final class AnswerHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = OutgoingRequest
    typealias OutboundOut = HTTPClientRequestPart

    let driver: LoadDriver
    private var inFlight: (index: Int, generation: Int)?
    private var status: HTTPResponseStatus = .ok
    private var bodyBytes = 0

    init(driver: LoadDriver) { self.driver = driver }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let outgoing = self.unwrapOutboundIn(data)
        self.inFlight = (outgoing.index, outgoing.generation)
        self.bodyBytes = 0
        context.write(self.wrapOutboundOut(.head(outgoing.request.head)), promise: nil)
        if let body = outgoing.request.body {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        context.write(self.wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.status = head.status
        case .body(let body):
            self.bodyBytes += body.readableBytes
        case .end:
            guard let request = self.inFlight else { return }
            self.inFlight = nil
            self.driver.answered(request, ok: self.driver.accept(self.status, self.bodyBytes), on: context.channel)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let inFlight = self.inFlight
        self.inFlight = nil
        self.driver.closed(context.channel, inFlight: inFlight)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
