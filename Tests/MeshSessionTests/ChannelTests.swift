import Foundation
@testable import MeshRouting
@testable import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// Application channels (PROTOCOL.md §13.12) on real sessions over loopback: A—B—C in a line.
@Suite("Application channels over loopback", .serialized)
struct ChannelTests {
    static let appID = ChannelID(rawValue: 0x5EED_0001)!

    /// The next message on a channel, or a failure at the deadline.
    static func next(_ channel: MeshChannel, timeout: Duration = .seconds(10)) async throws -> ChannelMessage {
        try await withThrowingTaskGroup(of: ChannelMessage?.self) { group in
            group.addTask {
                var iterator = channel.messages.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let message = first else {
                throw TimeoutError(description: "no message on \(channel.id) within \(timeout)")
            }
            return message
        }
    }

    /// Waits until a condition holds (bounded polling), or fails.
    static func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TimeoutError(description: "\(what) within \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("a sealed message crosses the relay to C only; a broadcast reaches B and C once, with hop counts")
    func sealedAndBroadcast() async throws {
        let (a, b, c, _, _, _) = try await MeshRelayTests.line()
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        let ca = try a.session.register(channel: Self.appID)
        let cb = try b.session.register(channel: Self.appID)
        let cc = try c.session.register(channel: Self.appID)

        try await ca.send(Data("for carol".utf8), to: c.id)
        let sealed = try await Self.next(cc)
        #expect(sealed.payload == Data("for carol".utf8))
        #expect(sealed.delivery == .sealed)
        #expect(sealed.hops == 2)
        #expect(sealed.sender.id == a.id.id && sealed.sender.displayName == "alice")
        #expect(abs(sealed.sentAt.timeIntervalSinceNow) < 60)
        #expect(cb.messages.count == 0, "the relay must not deliver a packet sealed for another node")

        let nobody = try await ca.broadcast(Data("to all".utf8))
        #expect(!nobody)
        let atB = try await Self.next(cb), atC = try await Self.next(cc)
        #expect(atB.payload == Data("to all".utf8) && atB.delivery == .broadcast && atB.hops == 1)
        #expect(atC.payload == Data("to all".utf8) && atC.delivery == .broadcast && atC.hops == 2)
        // Exactly once: the next message C sees is the next one sent.
        try await ca.send(Data("after".utf8), to: c.id)
        #expect(try await Self.next(cc).payload == Data("after".utf8))
        #expect(ca.messages.count == 0, "a node does not receive its own broadcast")
    }

    @Test("an attachment travels in the signed advert to a node two hops away, and is withdrawn")
    func attachment() async throws {
        let (a, b, c, _, _, _) = try await MeshRelayTests.line()
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        let ca = try a.session.register(channel: Self.appID)
        let cc = try c.session.register(channel: Self.appID)
        #expect(cc.attachment(of: a.id) == nil)
        try await ca.setAttachment(Data("sets: oslo".utf8))
        #expect(ca.attachment(of: a.id) == Data("sets: oslo".utf8))
        try await Self.waitUntil("C sees A's attachment") { cc.attachment(of: a.id) == Data("sets: oslo".utf8) }
        // Another channel does not see it.
        let other = try c.session.register(channel: ChannelID(rawValue: 0x5EED_0002)!)
        #expect(other.attachment(of: a.id) == nil)
        // A receiver's smaller limit hides it.
        var small = ChannelLimits()
        small.maxAttachmentSize = 4
        other.close()
        let hidden = try c.session.register(channel: ChannelID(rawValue: Self.appID.rawValue + 1)!, limits: small)
        #expect(hidden.attachment(of: a.id) == nil)
        try await ca.setAttachment(nil)
        try await Self.waitUntil("C sees A's attachment withdrawn") { cc.attachment(of: a.id) == nil }
        await #expect(throws: SessionError.payloadTooLarge(0, limit: 0, mode: .reliable)) {
            try await ca.setAttachment(Data(count: Session.maxChannelAttachment + 1))
        }
    }

    @Test("a consumer that stops holds the link (wait policy): then every message arrives once, in order, each counted once against the rate")
    func waitPolicyHoldsTheLink() async throws {
        let (a, b, c, _, _, _) = try await MeshRelayTests.line()
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        var limits = ChannelLimits()
        limits.inboundCapacity = 4
        limits.overflow = .wait
        // Exactly the messages sent: one message counted twice (offered again after the queue
        // had room) would put the last one over the rate.
        limits.burst = 300
        limits.messagesPerSecond = 1
        let ca = try a.session.register(channel: Self.appID)
        let cc = try c.session.register(channel: Self.appID, limits: limits)
        for i in 0..<300 {
            do { try await ca.send(Data("line \(i)".utf8), to: c.id) } catch { Issue.record("send \(i): \(error)"); throw error }
        }
        // C's queue fills; the rest waits in C's link from B (whose reads are held) and behind it.
        try await Self.waitUntil("C's channel queue is full") { cc.messages.count == 4 }
        var iterator = cc.messages.makeAsyncIterator()
        var received: [String] = []
        for i in 0..<300 {
            guard let message = await iterator.next() else { Issue.record("the channel ended at \(i)"); return }
            received.append(String(decoding: message.payload, as: UTF8.self))
        }
        let expected = (0..<300).map { "line \($0)" }
        #expect(received == expected, "first difference at \(expected.indices.first { received[$0] != expected[$0] } ?? -1): \(received.prefix(40))")
        #expect(cc.refusals.refused.isEmpty, "refused: \(cc.refusals.refused)")
        #expect(cc.refusals.overflowed == 0)
        // The link that was held is still read and carries on (on another channel: this one's
        // burst is used up, and its rate refills one a second).
        let otherID = ChannelID(rawValue: 0x5EED_0002)!
        let oa = try a.session.register(channel: otherID), oc = try c.session.register(channel: otherID)
        do { try await oa.send(Data("after".utf8), to: c.id) } catch { Issue.record("send after: \(error)"); throw error }
        #expect(try await Self.next(oc).payload == Data("after".utf8))
    }

    @Test("a message for a channel nobody registered is dropped without closing a link; limits bind the receiver")
    func unregisteredAndLimits() async throws {
        let (a, b, c, _, _, _) = try await MeshRelayTests.line()
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        let ca = try a.session.register(channel: Self.appID)
        let other = try a.session.register(channel: ChannelID(rawValue: 0x5EED_0003)!)
        var limits = ChannelLimits()
        limits.maxMessageSize = 10
        limits.burst = 2
        limits.messagesPerSecond = 1
        // C has not registered `other`: A's message on it is dropped at C.
        try await other.send(Data("nobody listens".utf8), to: c.id)
        try await other.broadcast(Data("nobody listens".utf8))
        let cc = try c.session.register(channel: Self.appID, limits: limits)
        // Over C's size limit (A's own limit is larger): dropped and counted, not delivered.
        try await ca.send(Data(count: 11), to: c.id)
        try await Self.waitUntil("C refuses the large message") { cc.refusals.refused[.tooLarge] == 1 }
        // Rate: 2 at once, then 1 a second; 10 sent at once, at least 1 refused.
        for index in 0..<10 { try await ca.send(Data([UInt8(index)]), to: c.id) }
        try await Self.waitUntil("C refuses a message over the rate") { (cc.refusals.refused[.overRate] ?? 0) >= 1 }
        #expect(try await Self.next(cc).payload == Data([0]))
        #expect(try await Self.next(cc).payload == Data([1]))
        // Every link is still up.
        #expect(c.session.connectedPeers.map(\.id) == [b.id.id])
        #expect(b.session.connectedPeers.count == 2)
    }

    @Test("registration: a duplicate is refused, reserved ids and bad limits are refused, close frees the id")
    func registration() async throws {
        let a = try await Node("alice")
        defer { Task { await a.stop() } }
        let first = try a.session.register(channel: Self.appID)
        #expect(throws: SessionError.channelInUse(Self.appID)) { try a.session.register(channel: Self.appID) }
        #expect(throws: SessionError.invalidChannel(Self.appID, "")) { try a.session.register(channel: ChannelID(rawValue: 2_000)!) }
        var bad = ChannelLimits()
        bad.maxMessageSize = Session.maxChannelPayload + 1
        #expect(throws: SessionError.invalidChannel(Self.appID, "")) {
            try a.session.register(channel: ChannelID(rawValue: 70_000)!, limits: bad)
        }
        #expect(ChannelID(rawValue: 0) == nil)
        first.close()
        await #expect(throws: SessionError.channelClosed(Self.appID)) { try await first.broadcast(Data("x".utf8)) }
        let again = try a.session.register(channel: Self.appID)
        #expect(again.id == Self.appID)
        await #expect(throws: SessionError.payloadTooLarge(0, limit: 0, mode: .reliable)) {
            try await again.broadcast(Data(count: again.limits.maxBroadcastSize + 1))
        }
    }
}

/// The channel's receive limits as a pure value.
@Suite("Channel admission")
struct ChannelAdmissionTests {
    let alice = NodeID.random(), bob = NodeID.random()
    let start = RouterInstant(offset: .zero)

    @Test("size is checked per delivery, the replay window by skew, the rate per sender")
    func limits() {
        var limits = ChannelLimits()
        limits.maxMessageSize = 100
        limits.maxBroadcastSize = 10
        limits.burst = 2
        limits.messagesPerSecond = 1
        limits.replayWindow = .seconds(60)
        var admission = ChannelAdmission(limits: limits)
        #expect(admission.admit(size: 11, delivery: .broadcast, sender: alice, skew: .zero, now: start) == .tooLarge)
        #expect(admission.admit(size: 101, delivery: .sealed, sender: alice, skew: .zero, now: start) == .tooLarge)
        #expect(admission.admit(size: 1, delivery: .sealed, sender: alice, skew: .seconds(61), now: start) == .stale)
        #expect(admission.admit(size: 100, delivery: .sealed, sender: alice, skew: .seconds(60), now: start) == nil)
        #expect(admission.admit(size: 10, delivery: .broadcast, sender: alice, skew: .zero, now: start) == nil)
        #expect(admission.admit(size: 1, delivery: .sealed, sender: alice, skew: .zero, now: start) == .overRate)
        #expect(admission.admit(size: 1, delivery: .sealed, sender: bob, skew: .zero, now: start) == nil, "each sender has its own bucket")
        #expect(admission.admit(size: 1, delivery: .sealed, sender: alice, skew: .zero, now: RouterInstant(offset: .seconds(1))) == nil)
        limits.replayWindow = nil
        var anyClock = ChannelAdmission(limits: limits)
        #expect(anyClock.admit(size: 1, delivery: .sealed, sender: alice, skew: .seconds(100_000), now: start) == nil)
    }

    @Test("sender buckets are bounded: a full one is forgotten for a new sender, else the new sender is refused")
    func boundedSenders() {
        var limits = ChannelLimits()
        limits.burst = 1
        limits.messagesPerSecond = 1
        var admission = ChannelAdmission(limits: limits)
        for _ in 0..<ChannelAdmission.maxSenders {
            #expect(admission.admit(size: 1, delivery: .sealed, sender: .random(), skew: .zero, now: start) == nil)
        }
        #expect(admission.admit(size: 1, delivery: .sealed, sender: alice, skew: .zero, now: start) == .tooManySenders)
        #expect(admission.admit(size: 1, delivery: .sealed, sender: alice, skew: .zero, now: RouterInstant(offset: .seconds(2))) == nil)
    }
}
