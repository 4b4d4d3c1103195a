import Foundation
@testable import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// Channel messages to a neighbour on the link itself (PROTOCOL.md §6.3, version 7), on real
/// sessions over loopback.
@Suite("Direct channel messages over loopback", .serialized)
struct DirectChannelTests {
    static let appID = ChannelID(rawValue: 0x5EED_0D01)!

    static var direct: ChannelLimits {
        var limits = ChannelLimits()
        limits.directToNeighbours = true
        return limits
    }

    @Test("a direct channel reaches a neighbour on the link (no end-to-end session) and a node two hops away sealed")
    func neighbourOnTheLink() async throws {
        let (a, b, c, _, _, _) = try await MeshRelayTests.line()
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        let ca = try a.session.register(channel: Self.appID, limits: Self.direct)
        let cb = try b.session.register(channel: Self.appID, limits: Self.direct)
        let cc = try c.session.register(channel: Self.appID, limits: Self.direct)
        let sessionsBefore = a.session.mesh.endToEnd.pairsInMemory

        try await ca.send(Data("for bob".utf8), to: b.id)
        let atB = try await ChannelTests.next(cb)
        #expect(atB.payload == Data("for bob".utf8) && atB.payload.startIndex == 0)
        #expect(atB.delivery == .sealed && atB.hops == 1)
        #expect(atB.sender.id == a.id.id && atB.sender.displayName == "alice")
        #expect(abs(atB.sentAt.timeIntervalSinceNow) < 60)
        #expect(a.session.mesh.endToEnd.pairsInMemory == sessionsBefore, "a message to a neighbour made an end-to-end session")

        try await ca.send(Data("for carol".utf8), to: c.id)
        let atC = try await ChannelTests.next(cc)
        #expect(atC.payload == Data("for carol".utf8) && atC.hops == 2)
        #expect(a.session.mesh.endToEnd.pairsInMemory == sessionsBefore + 1, "a message two hops away goes sealed on a session")
        #expect(cb.messages.count == 0, "the relay must not deliver a packet for another node")
    }

    @Test("a channel that does not choose the link seals to its neighbour too")
    func sealedByDefault() async throws {
        let (a, b, _, _, _) = try await MeshRelayTests.linkedPair()
        defer { Task { for node in [a, b] { await node.stop() } } }
        let ca = try a.session.register(channel: Self.appID)
        let cb = try b.session.register(channel: Self.appID)
        let sessionsBefore = a.session.mesh.endToEnd.pairsInMemory
        try await ChannelTests.waitUntil("alice reaches bob") { a.session.route(to: b.id) != nil }
        try await ca.send(Data("sealed".utf8), to: b.id)
        let atB = try await ChannelTests.next(cb)
        #expect(atB.payload == Data("sealed".utf8) && atB.hops == 1)
        #expect(a.session.mesh.endToEnd.pairsInMemory == sessionsBefore + 1)
    }

    @Test("a hostile neighbour: channel 0 and unregistered channels are dropped, the link stays; an oversized payload closes it")
    func hostile() async throws {
        let b = try await Node("bob")
        defer { Task { await b.stop() } }
        let cb = try b.session.register(channel: Self.appID, limits: Self.direct)
        let mallory = try await HostilePeer(port: b.port)
        defer { Task { await mallory.close() } }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try await mallory.send(.direct(channel: 0, payload: Data("zero".utf8), sentAtMilliseconds: now))
        try await mallory.send(.direct(channel: Self.appID.rawValue + 1, payload: Data("nobody".utf8), sentAtMilliseconds: now))
        try await mallory.send(.direct(channel: Self.appID.rawValue, payload: Data("hello".utf8), sentAtMilliseconds: now))
        let first = try await ChannelTests.next(cb)
        #expect(first.payload == Data("hello".utf8), "the dropped messages must not arrive, nor close the link")
        #expect(first.sender.id == mallory.nodeID && first.hops == 1)
        #expect(mallory.closed == nil)
        // Replayed from long ago: the channel's replay window drops it, the link stays.
        try await mallory.send(.direct(channel: Self.appID.rawValue, payload: Data("old".utf8), sentAtMilliseconds: now - 3_600_000))
        try await mallory.send(.direct(channel: Self.appID.rawValue, payload: Data("fresh".utf8), sentAtMilliseconds: now))
        #expect(try await ChannelTests.next(cb).payload == Data("fresh".utf8))
        // One byte over the channel payload limit: a protocol violation, only this link closes.
        try await mallory.send(.direct(channel: Self.appID.rawValue, payload: Data(count: WireLimits.maxRelayedPayload + 1), sentAtMilliseconds: now))
        let reason = await mallory.waitUntilClosed()
        #expect(reason?.code == .protocolViolation)
        #expect(cb.messages.count == 0)
    }
}
