import NIOCore

/// Sits before the frame decoder and tells the ``LinkHandler`` that bytes arrived, whole frame or
/// not (``LinkHandler/BytesReceived``): liveness counts any received byte as life (PROTOCOL.md §7.2).
///
/// - Important: event-loop only; not thread-safe.
public final class ReceivedBytesHandler: ChannelInboundHandler, RemovableChannelHandler {
    /// Bytes from the socket.
    public typealias InboundIn = ByteBuffer
    /// The same bytes, for the decoder.
    public typealias InboundOut = ByteBuffer

    /// Creates the handler.
    public init() {}

    /// Signals the bytes, then passes them on.
    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireUserInboundEventTriggered(LinkHandler.BytesReceived())
        context.fireChannelRead(data)
    }
}

@available(*, unavailable)
extension ReceivedBytesHandler: Sendable {}
