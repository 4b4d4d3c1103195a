import struct Foundation.Data
import Logging
import MeshLink
import MeshTransport
import MeshWire
import NIOConcurrencyHelpers
import NIOCore

/// A peer that completes a real Noise XX handshake with a real identity, then misbehaves: it writes
/// whatever envelopes a test crafts (routed packets with bad headers, oversized chat lines, floods
/// of adverts or sealed packets) as fast as the link takes them.
///
/// It answers keepalives like any peer (the ``LinkHandler`` does), so the victim only closes it for
/// what it sends. This type is thread-safe.
public final class HostilePeer: Sendable {
    /// The peer's keys: adverts and broadcasts it signs are valid.
    public let identity: LocalIdentity
    /// The victim's node id, from the handshake.
    public let victim: NodeID
    private let link: LinkChannel
    private let closeReason = NIOLockedValueBox<LinkCloseReason?>(nil)
    private let advertOrigins = NIOLockedValueBox<Set<NodeID>>([])
    private let reader: Task<Void, Never>
    private let invented = NIOLockedValueBox<[LocalIdentity]>([])

    /// This peer's node id.
    public var nodeID: NodeID { identity.nodeID }

    /// An error of the hostile peer itself (not of the victim).
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public let description: String
    }

    /// Dials `127.0.0.1:port` and completes the handshake.
    /// - Parameters:
    ///   - port: the victim's TCP port.
    ///   - name: the display name to announce.
    ///   - identity: the keys; a fresh identity when `nil`.
    /// - Throws: ``Failure`` when the link does not establish.
    public init(port: Int, name: String = "mallory", identity: LocalIdentity? = nil) async throws {
        let identity = try identity ?? LocalIdentity.generate()
        self.identity = identity
        var logger = Logger(label: "hostile-peer")
        logger.logLevel = .critical
        let transport = TCPTransport(group: EventLoops.shared,
                                     handshake: .init(identity: identity, displayName: name), logger: logger)
        let link = try await transport.connect(host: "127.0.0.1", port: port)
        self.link = link
        let (established, continuation) = AsyncStream<NodeID?>.makeStream()
        let closeReason = self.closeReason
        let advertOrigins = self.advertOrigins
        // Keep reading (the victim's pings are answered below the stream, but a full stream would
        // stop the socket being read) until the link ends.
        reader = Task {
            try? await link.executeThenClose { inbound, _ in
                for try await event in inbound {
                    switch event {
                    case .established(let info): continuation.yield(info.peer.nodeID)
                    case .envelope(let envelope):
                        if case .routed(let routed)? = envelope.body, case .linkState? = routed.payload,
                           let origin = try? NodeID(bytes: routed.origin) {
                            advertOrigins.withLockedValue { _ = $0.insert(origin) }
                        }
                    case .closed(let reason):
                        closeReason.withLockedValue { $0 = reason }
                        continuation.yield(nil)
                    default: break
                    }
                }
            }
            continuation.yield(nil)
            continuation.finish()
        }
        var victim: NodeID?
        for await node in established {
            victim = node
            break
        }
        guard let victim else {
            reader.cancel()
            throw Failure(description: "the link to port \(port) did not establish: \(closeReason.withLockedValue { $0 }.map { "\($0)" } ?? "closed")")
        }
        self.victim = victim
    }

    deinit { reader.cancel() }

    /// Whether the victim closed the link, and why (its goodbye), once it has.
    public var closed: LinkCloseReason? { closeReason.withLockedValue { $0 } }

    /// The origins of the adverts the victim sent this peer (its database sync, §13.2).
    public var advertsReceived: Set<NodeID> { advertOrigins.withLockedValue { $0 } }

    /// Sends one envelope and waits until the socket took it.
    /// - Throws: when the link is closed.
    public func send(_ envelope: Envelope) async throws {
        try await link.channel.writeAndFlush(envelope)
    }

    /// Sends envelopes as fast as the link takes them, flushing in batches, until all are sent or
    /// the link closes.
    /// - Parameters:
    ///   - count: how many envelopes.
    ///   - envelope: makes the envelope of each index, lazily (a flood need not sit in memory).
    /// - Returns: how many were written.
    @discardableResult
    public func flood(_ count: Int, _ envelope: (Int) -> Envelope) async -> Int {
        var written = 0
        let batch = 64
        while written < count {
            let end = min(count, written + batch)
            var last: EventLoopFuture<Void>?
            for index in written..<end { last = link.channel.write(envelope(index)) }
            link.channel.flush()
            do {
                try await last?.get()
            } catch {
                return written
            }
            written = end
        }
        return written
    }

    /// Waits until the victim closes the link.
    /// - Returns: the reason, or `nil` when it did not close within `timeout`.
    public func waitUntilClosed(timeout: Duration = .seconds(10)) async -> LinkCloseReason? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let reason = closed { return reason }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return closed
    }

    /// Closes the link from this side.
    public func close() async {
        try? await link.channel.close()
        reader.cancel()
    }

    // MARK: Crafted envelopes

    /// A routed envelope around `payload` with a header this peer chooses (PROTOCOL.md §13.1).
    public static func routed(origin: Data, destination: Data = Data(), packetID: Data = Data(repeating: 7, count: 16),
                              hopLimit: UInt32 = 7, hops: UInt32 = 0,
                              payload: RoutedPayload.OneOf_Payload) -> Envelope {
        var routed = RoutedPayload()
        routed.origin = origin
        routed.destination = destination
        routed.packetID = packetID
        routed.hopLimit = hopLimit
        routed.hops = hops
        routed.payload = payload
        var envelope = Envelope()
        envelope.body = .routed(routed)
        return envelope
    }

    /// A sealed packet of random-looking bytes from this peer to `destination`: it never opens.
    public func sealedGarbage(to destination: NodeID, index: Int, size: Int = 200) -> Envelope {
        Self.routed(origin: Data(nodeID.bytes), destination: Data(destination.bytes), packetID: Self.packetID(index),
                    payload: .sealed(Data(repeating: UInt8(truncatingIfNeeded: index), count: size)))
    }

    /// A validly signed advert of `origin` (this peer when `nil`) with this sequence, listing `neighbors`.
    public func advert(of origin: LocalIdentity? = nil, sequence: UInt64, neighbors: [NodeID], name: String = "mallory") -> Envelope {
        let origin = origin ?? identity
        var payload = LinkStatePayload()
        payload.displayName = name
        payload.sequence = sequence
        payload.neighbors = neighbors.map {
            var neighbor = LinkStateNeighborPayload()
            neighbor.nodeID = Data($0.bytes)
            neighbor.latencyUs = 1000
            return neighbor
        }
        let signed = MeshSigning.signLinkState(payload, identity: origin)
        var packetID = Data(origin.nodeID.bytes.prefix(8))
        withUnsafeBytes(of: sequence.bigEndian) { packetID.append(contentsOf: $0) }
        return Self.routed(origin: Data(origin.nodeID.bytes), packetID: packetID, hopLimit: 32, payload: .linkState(signed))
    }

    /// The identities of the nodes ``Flood/inventedNodes`` invents, made once per peer.
    func inventedIdentities() -> [LocalIdentity] {
        invented.withLockedValue { identities in
            if identities.isEmpty { identities = (0..<Self.inventedNodes).compactMap { _ in try? LocalIdentity.generate() } }
            return identities
        }
    }

    /// A packet id made from a number (distinct per index, so no duplicate cache catches it).
    public static func packetID(_ index: Int) -> Data {
        var id = Data(repeating: 0xab, count: 8)
        withUnsafeBytes(of: UInt64(truncatingIfNeeded: index).bigEndian) { id.append(contentsOf: $0) }
        return id
    }
}
