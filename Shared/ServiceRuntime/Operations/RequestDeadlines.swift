import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request headers do not arrive in time: from the moment it is opened a client has
/// `deadline` to deliver a complete request head, and from the end of each response `keepAliveDeadline` (the idle
/// timeout) for the next one. A client trickling header bytes (slowloris) is cut off instead of holding a
/// connection and its memory for as long as it keeps sending; the body has its own deadline (`HTTP_BODY_TIMEOUT_MS`).
///
/// Decision: between requests the wait is the idle timeout, not the header deadline. Clients keep connections
/// alive and reuse them long after a response (AsyncHTTPClient for a minute); closing an idle kept-alive
/// connection after the short header deadline raced with such a reuse and failed the request
/// (`remoteConnectionClosed` in a fresh-clone test run).
final class HeaderDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let deadline: TimeAmount
    let keepAliveDeadline: TimeAmount
    /// The pending close (only touched on the channel's event loop).
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount, keepAliveDeadline: TimeAmount) {
        self.deadline = deadline
        self.keepAliveDeadline = max(deadline, keepAliveDeadline)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.arm(context, within: self.deadline) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.arm(context, within: self.deadline)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.disarm()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.disarm()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = self.unwrapInboundIn(data) { self.disarm() }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = self.unwrapOutboundIn(data) { self.arm(context, within: self.keepAliveDeadline) }
        context.write(data, promise: promise)
    }

    /// Starts the wait for the next request head.
    private func arm(_ context: ChannelHandlerContext, within wait: TimeAmount) {
        self.disarm()
        let channel = context.channel
        self.timer = context.eventLoop.scheduleTask(in: wait) { channel.close(promise: nil) }
    }

    /// Stops the wait: a head arrived, or the connection is gone.
    private func disarm() {
        self.timer?.cancel()
        self.timer = nil
    }
}
