import MeshChatKit
import MeshSession
import MeshStore
import MeshWire
import Testing

/// `meshchat send`'s decisions, input by input (no node, no clock).
@Suite("one-shot send")
struct OneShotSendTests {
    static func peer(_ name: String, _ byte: UInt8) throws -> PeerID {
        try PeerID(id: NodeID(bytes: [byte] + Array(repeating: 0, count: 15)), displayName: name)
    }

    @Test("a private line: waits for the peer, stores once, finishes when the receipt is back")
    func delivered() throws {
        let bob = try Self.peer("bob", 0xb0)
        var machine = OneShotSend(target: "bob")
        #expect(machine.observe(reachable: [], connected: [], status: nil) == .wait)
        #expect(machine.observe(reachable: [bob], connected: [bob], status: nil) == .store(to: bob))
        #expect(machine.observe(reachable: [bob], connected: [bob], status: nil) == .wait, "stored twice")
        #expect(machine.stored(id: "l1", status: .sent, connected: [bob]) == .wait)
        #expect(machine.observe(reachable: [bob], connected: [bob], status: .sent) == .wait)
        #expect(machine.observe(reachable: [bob], connected: [bob], status: .delivered) == .finish(.delivered(bob)))
        #expect(machine.observe(reachable: [bob], connected: [bob], status: .delivered) == .wait)
    }

    @Test("an id prefix or another case finds the peer, as /msg does")
    func matching() throws {
        let bob = try Self.peer("Bob", 0xb0)
        var byPrefix = OneShotSend(target: "b000")
        #expect(byPrefix.observe(reachable: [bob], connected: [], status: nil) == .store(to: bob))
        var byCase = OneShotSend(target: "bob")
        #expect(byCase.observe(reachable: [bob], connected: [], status: nil) == .store(to: bob))
    }

    @Test("no receipt by the deadline: queued, with the peer")
    func noReceipt() throws {
        let bob = try Self.peer("bob", 0xb0)
        var machine = OneShotSend(target: "bob")
        _ = machine.observe(reachable: [bob], connected: [bob], status: nil)
        _ = machine.stored(id: "l1", status: .sent, connected: [bob])
        #expect(machine.deadlinePassed(known: [bob]) == .finish(.queued(bob, reason: .noReceipt)))
    }

    @Test("two reachable peers by that name: unknown at once, nothing stored")
    func ambiguous() throws {
        let bob1 = try Self.peer("bob", 0xb1)
        let bob2 = try Self.peer("bob", 0xb2)
        var machine = OneShotSend(target: "bob")
        guard case .finish(.unknownPeer(let message)) = machine.observe(reachable: [bob1, bob2], connected: [], status: nil) else {
            Issue.record("two bobs were not refused")
            return
        }
        #expect(message.contains("matches 2 peers"))
        #expect(message.contains("nothing was sent"))
    }

    @Test("never reachable: a peer from the history gets the line queued; a name nobody has is unknown")
    func deadlineWhileResolving() throws {
        let carol = try Self.peer("carol", 0xc0)
        var known = OneShotSend(target: "carol")
        #expect(known.observe(reachable: [], connected: [], status: nil) == .wait)
        #expect(known.deadlinePassed(known: [carol]) == .store(to: carol))
        #expect(known.stored(id: "l1", status: .queued, connected: []) == .finish(.queued(carol, reason: .unreachable)))

        var unknown = OneShotSend(target: "dave")
        #expect(unknown.observe(reachable: [carol], connected: [carol], status: nil) == .wait)
        #expect(unknown.deadlinePassed(known: [carol])
                == .finish(.unknownPeer("no peer called \"dave\" was reachable, and none is in the history; nothing was sent")))
    }

    @Test("to everyone: stores at once, done when it went out to the connected peers, queued when nobody came")
    func everyone() throws {
        let bob = try Self.peer("bob", 0xb0)
        var atOnce = OneShotSend(target: nil)
        #expect(atOnce.observe(reachable: [bob], connected: [bob], status: nil) == .store(to: nil))
        #expect(atOnce.stored(id: "l1", status: .sent, connected: [bob]) == .finish(.sent([bob])))

        var later = OneShotSend(target: nil)
        #expect(later.observe(reachable: [], connected: [], status: nil) == .store(to: nil))
        #expect(later.stored(id: "l1", status: .queued, connected: []) == .wait)
        #expect(later.observe(reachable: [bob], connected: [bob], status: .sent) == .finish(.sent([bob])))

        var nobody = OneShotSend(target: nil)
        _ = nobody.observe(reachable: [], connected: [], status: nil)
        _ = nobody.stored(id: "l1", status: .queued, connected: [])
        #expect(nobody.deadlinePassed(known: []) == .finish(.queued(nil, reason: .nobodyConnected)))
    }
}
