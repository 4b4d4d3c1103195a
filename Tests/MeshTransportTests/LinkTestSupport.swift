import struct Foundation.Data
import Logging
import MeshLink
import MeshTransport
import MeshWire
import NIOCore
import NIOEmbedded

/// One side of a link under test: an `EmbeddedChannel` with the decoder and a ``LinkHandler``.
final class LinkSide {
    let channel: EmbeddedChannel
    let identity: LocalIdentity
    /// Every event read from the channel so far (see ``collect()``).
    private(set) var events: [LinkEvent] = []
    /// Whether ``pump`` calls `read()` after delivering, like an auto-reading channel.
    var autoRead = true

    init(_ role: HandshakeStateMachine.Role, name: String, loop: EmbeddedEventLoop,
         timing: LinkHandler.Timing = LinkHandler.Timing(), admission: LinkAdmission? = nil,
         expectedPeer: NodeID? = nil) throws {
        let identity = try LocalIdentity.generate()
        self.identity = identity
        let handshake = try HandshakeStateMachine(
            role: role, configuration: .init(identity: identity, displayName: name))
        channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
        try channel.pipeline.syncOperations.addHandler(
            LinkHandler(handshake: handshake, budget: nil, timing: timing, admission: admission,
                        expectedPeer: expectedPeer, logger: Logger(label: "test")))
    }

    /// Connects the channel, which starts the handshake.
    func connect() throws {
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
    }

    /// Reads all pending inbound events into ``events`` and returns the new ones.
    @discardableResult
    func collect() throws -> [LinkEvent] {
        var new: [LinkEvent] = []
        while let event = try channel.readInbound(as: LinkEvent.self) { new.append(event) }
        events += new
        return new
    }

    /// All outbound buffers written so far (consumed).
    func takeOutbound() throws -> [ByteBuffer] {
        var buffers: [ByteBuffer] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { buffers.append(buffer) }
        return buffers
    }

    /// Feeds bytes in as if read from the socket (dropped when the channel is closed).
    func deliver(_ buffers: [ByteBuffer]) throws {
        for buffer in buffers where channel.isActive {
            try channel.writeInbound(buffer)
            if autoRead, channel.isActive { channel.read() }
        }
    }

    var closeReasons: [LinkCloseReason] {
        events.compactMap { if case .closed(let reason) = $0 { reason } else { nil } }
    }

    var envelopes: [Envelope] {
        events.compactMap { if case .envelope(let envelope) = $0 { envelope } else { nil } }
    }

    var establishedInfo: LinkInfo? {
        events.lazy.compactMap { if case .established(let info) = $0 { info } else { nil } }.first
    }
}

/// Moves bytes between two sides until neither has anything to send; returns how many buffers moved.
@discardableResult
func pump(_ a: LinkSide, _ b: LinkSide) throws -> Int {
    var moved = 0
    while true {
        let fromA = try a.takeOutbound()
        try b.deliver(fromA)
        let fromB = try b.takeOutbound()
        try a.deliver(fromB)
        try a.collect()
        try b.collect()
        moved += fromA.count + fromB.count
        if fromA.isEmpty && fromB.isEmpty { return moved }
    }
}

/// An initiator and a responder that completed the handshake, optionally on one loop.
func establishedPair(sharedLoop: Bool = true, timing: LinkHandler.Timing = LinkHandler.Timing()) throws
    -> (initiator: LinkSide, responder: LinkSide, loop: EmbeddedEventLoop) {
    let loop = EmbeddedEventLoop()
    let initiator = try LinkSide(.initiator, name: "a", loop: loop, timing: timing)
    let responder = try LinkSide(.responder, name: "b", loop: sharedLoop ? loop : EmbeddedEventLoop(), timing: timing)
    try responder.connect()
    try initiator.connect()
    try pump(initiator, responder)
    guard initiator.establishedInfo != nil, responder.establishedInfo != nil else {
        throw TestFailure("handshake did not complete: \(initiator.events) / \(responder.events)")
    }
    return (initiator, responder, loop)
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The type bytes of all frames in the buffers (decoded with ``FrameParser``).
func frameTypes(_ buffers: [ByteBuffer]) throws -> [FrameType] {
    var types: [FrameType] = []
    for var buffer in buffers {
        while let frame = try FrameParser().parse(&buffer) { types.append(frame.type) }
    }
    return types
}

/// Deterministic test bytes.
func testBytes(_ count: Int, seed: UInt8) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
}
