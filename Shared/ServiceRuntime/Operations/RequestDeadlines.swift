import NIOCore
import NIOHTTPTypes

/// A request whose body did not arrive within the body deadline (`HTTP_BODY_TIMEOUT_MS`): reading the body throws
/// it, and the route answers 408. The connection is closed after that answer.
public struct BodyDeadlineExceeded: Error, Sendable {}

/// The deadlines of an HTTP/1 connection, kept on its event loop by one timer per connection:
/// - from the moment it is opened a client has `headerDeadline` to deliver a complete request head, and from the end
///   of each response `keepAliveDeadline` (the idle timeout) for the next one: a client trickling header bytes
///   (slowloris) is cut off (the connection is closed) instead of holding a connection and its memory;
/// - from a request's head, the client has `bodyDeadline` to deliver its whole body: past it, reading the body
///   throws ``BodyDeadlineExceeded`` (the route answers 408) and what else arrives of that request is dropped.
///
/// Decision: between requests the wait is the idle timeout, not the header deadline. Clients keep connections
/// alive and reuse them long after a response (AsyncHTTPClient for a minute); closing an idle kept-alive
/// connection after the short header deadline raced with such a reuse and failed the request
/// (`remoteConnectionClosed` in a fresh-clone test run).
///
/// Decision: a request costs no timer of its own. Each phase only records until when it may last; the connection's
/// timer fires at the latest one shortest deadline after it was armed, checks the phase, and arms again (at the
/// phase's end when that comes first). A deadline recorded later is at least one shortest deadline away, so the
/// timer always fires in time for it. Scheduling and cancelling a timer for each head and each body, with a task
/// to wait on the body, was 5.0 % of ingest's samples under load (perf, 2026-12-01).
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What the connection waits for, and until when.
    private enum Phase {
        /// A request head, from connecting or from the previous response.
        case head(until: NIODeadline)
        /// The rest of a request whose head arrived.
        case body(until: NIODeadline)
        /// Nothing: the route has the whole request.
        case serving
        /// The body's deadline passed: the route was told; what still arrives of the request is dropped.
        case bodyExpired
    }

    let headerDeadline: TimeAmount
    let keepAliveDeadline: TimeAmount
    let bodyDeadline: TimeAmount
    /// The shortest of the three (at least 10 ms, so a deadline of zero cannot spin the loop): how long the timer waits
    /// at most before it looks again.
    private let interval: TimeAmount
    /// Only touched on the channel's event loop, as the timer.
    private var phase: Phase = .serving
    private var timer: Scheduled<Void>?

    init(headerDeadline: TimeAmount, keepAliveDeadline: TimeAmount, bodyDeadline: TimeAmount) {
        self.headerDeadline = headerDeadline
        self.keepAliveDeadline = max(headerDeadline, keepAliveDeadline)
        self.bodyDeadline = bodyDeadline
        self.interval = max(.milliseconds(10), min(headerDeadline, bodyDeadline))
    }

    // MARK: - The connection's life

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.start(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.stop()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stop()
        context.fireChannelInactive()
    }

    // MARK: - The phases

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (self.unwrapInboundIn(data), self.phase) {
        case (_, .bodyExpired):
            return  // the route was told; the connection closes after its answer
        case (.head, _):
            self.phase = .body(until: context.eventLoop.now + self.bodyDeadline)
        case (.end, .body):
            self.phase = .serving
        default:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = self.unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        guard case .bodyExpired = self.phase else {
            self.phase = .head(until: context.eventLoop.now + self.keepAliveDeadline)
            return context.write(data, promise: promise)
        }
        // The answer to a request whose body came too late (408): the connection closes once it is written.
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolatedUnsafeUnchecked().whenComplete { _ in context.close(promise: nil) }
        written.futureResult.cascade(to: promise)
        context.write(data, promise: written)
    }

    // MARK: - The timer

    /// Waits for the first head and arms the timer.
    private func start(_ context: ChannelHandlerContext) {
        guard self.timer == nil else { return }
        let now = context.eventLoop.now
        self.phase = .head(until: now + self.headerDeadline)
        self.arm(context, now: now)
    }

    /// Arms the timer for the phase's end, or one interval from now when that comes first.
    private func arm(_ context: ChannelHandlerContext, now: NIODeadline) {
        var next = now + self.interval
        switch self.phase {
        case .head(let until), .body(let until): next = min(next, until)
        case .serving, .bodyExpired: break
        }
        self.timer = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: next) {
            self.check(context)
        }
    }

    /// Acts on a phase whose deadline passed, and arms the timer again.
    private func check(_ context: ChannelHandlerContext) {
        self.timer = nil
        let now = context.eventLoop.now
        switch self.phase {
        case .head(let until) where until <= now:
            context.close(promise: nil)
            return
        case .body(let until) where until <= now:
            self.phase = .bodyExpired
            context.fireErrorCaught(BodyDeadlineExceeded())
        default:
            break
        }
        guard context.channel.isActive else { return }
        self.arm(context, now: now)
    }

    /// Stops the timer: the connection is gone.
    private func stop() {
        self.timer?.cancel()
        self.timer = nil
    }
}
