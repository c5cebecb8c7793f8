import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request headers do not arrive in time: from the moment it is opened, and again from
/// the end of each response (the next request on a kept-alive connection), a client has `deadline` to deliver a
/// complete request head. A client trickling header bytes (slowloris) is cut off instead of holding a connection
/// and its memory for as long as it keeps sending; the body has its own deadline (`HTTP_BODY_TIMEOUT_MS`).
final class HeaderDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let deadline: TimeAmount
    /// The pending close (only touched on the channel's event loop).
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.arm(context)
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
        if case .end = self.unwrapOutboundIn(data) { self.arm(context) }
        context.write(data, promise: promise)
    }

    /// Starts the wait for the next request head.
    private func arm(_ context: ChannelHandlerContext) {
        self.disarm()
        let channel = context.channel
        self.timer = context.eventLoop.scheduleTask(in: self.deadline) { channel.close(promise: nil) }
    }

    /// Stops the wait: a head arrived, or the connection is gone.
    private func disarm() {
        self.timer?.cancel()
        self.timer = nil
    }
}
