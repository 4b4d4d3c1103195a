import Foundation
@testable import MeshChatKit
import MeshSession
import Testing

/// The presence summary (peers coming and going as one line a burst, `--manual`'s invitation once
/// per appearance), in the pure tier with virtual time.
@Suite("presence summary")
struct PresenceSummaryTests {
    static func peer(_ name: String, _ n: UInt8) -> PeerID {
        try! PeerID(id: NodeID(hex: String(repeating: String(format: "%02x", n), count: 16)), displayName: name)
    }

    static let bob = peer("bob", 1), carol = peer("carol", 2), dave = peer("dave", 3), erin = peer("erin", 4), frank = peer("frank", 5)
    static let t0 = ContinuousClock.now

    static func connected(_ peer: PeerID) -> ChatOutput { .peer(peer, state: "connected", address: "10.0.0.1:7000", reason: nil) }
    static func disconnected(_ peer: PeerID) -> ChatOutput { .peer(peer, state: "notConnected", address: nil, reason: nil) }

    static func text(_ output: ChatOutput?) -> String? {
        output.flatMap { TextRenderer().render($0) }
    }

    @Test("a burst of joins and a leave within the window is one line, names beyond two counted")
    func burst() {
        var summary = PresenceSummary()
        #expect(summary.take(Self.connected(Self.bob), at: Self.t0) == .held(until: Self.t0 + PresenceSummary.window))
        for (n, peer) in [Self.carol, Self.erin, Self.frank].enumerated() {
            #expect(summary.take(Self.connected(peer), at: Self.t0 + .milliseconds(100 * n)) == .heldInWindow)
        }
        #expect(summary.take(.reachability(Self.dave, hops: nil, via: nil), at: Self.t0 + .seconds(1)) == .heldInWindow)
        // A peer's own route line, and a chat line, are not held.
        #expect(summary.take(.notice("hello"), at: Self.t0 + .seconds(1)) == .show)
        #expect(Self.text(summary.flush(at: Self.t0 + .seconds(1))) == nil, "the window is still open")
        #expect(Self.text(summary.flush(at: Self.t0 + PresenceSummary.window)) == "* bob, carol and 2 others joined; dave left")
        #expect(Self.text(summary.flush(at: Self.t0 + .seconds(10))) == nil, "nothing is held after a flush")
        // The next change opens a new window.
        #expect(summary.take(Self.disconnected(Self.bob), at: Self.t0 + .seconds(10)) == .held(until: Self.t0 + .seconds(12)))
    }

    @Test("one peer's burst is its last line unchanged; a link change wins over discovery and invitations")
    func onePeer() {
        var summary = PresenceSummary()
        _ = summary.take(.found(Self.bob, addresses: ["10.0.0.1:7000"], info: [:]), at: Self.t0)
        _ = summary.take(.invitation(Self.bob, direction: "sent", contextBytes: 0), at: Self.t0)
        _ = summary.take(Self.connected(Self.bob), at: Self.t0)
        _ = summary.take(.lost(Self.bob), at: Self.t0)
        #expect(Self.text(summary.flush(at: Self.t0 + .seconds(2))) == "* bob (01010101) connected at 10.0.0.1:7000")
        _ = summary.take(.found(Self.carol, addresses: [], info: [:]), at: Self.t0 + .seconds(3))
        _ = summary.take(.found(Self.dave, addresses: [], info: [:]), at: Self.t0 + .seconds(3))
        _ = summary.take(.lost(Self.erin), at: Self.t0 + .seconds(3))
        #expect(Self.text(summary.flush(at: Self.t0 + .seconds(5))) == "* carol and dave found nearby; erin no longer seen nearby")
    }

    @Test("--manual: an invitation sent answers /invite and is shown at once; automatic ones are held")
    func invitationsByHand() {
        let inviting = ChatOutput.invitation(Self.bob, direction: "sent", contextBytes: 0)
        var manual = PresenceSummary(invitesByHand: true)
        #expect(manual.take(inviting, at: Self.t0) == .show)
        var automatic = PresenceSummary()
        #expect(automatic.take(inviting, at: Self.t0) == .held(until: Self.t0 + PresenceSummary.window))
    }

    @Test("all shows every change; none drops them; neither holds anything")
    func modes() {
        var all = PresenceSummary(mode: .all)
        var none = PresenceSummary(mode: .none)
        for output in [Self.connected(Self.bob), .reachability(Self.carol, hops: 3, via: Self.bob), .lost(Self.dave)] {
            #expect(all.take(output, at: Self.t0) == .show)
            #expect(none.take(output, at: Self.t0) == .dropped)
        }
        #expect(none.take(.message(id: "1", from: Self.bob, text: "hi", sentAt: Date()), at: Self.t0) == .show)
        #expect(Self.text(all.flush(at: Self.t0 + .seconds(5))) == nil)
    }

    @Test("--manual: a waiting invitation is shown once per appearance; its repeats and expiries are not")
    func invitations() {
        var summary = PresenceSummary(mode: .none)
        let invitation = ChatOutput.invitation(Self.bob, direction: "received", contextBytes: 0, awaitsAnswer: true)
        #expect(summary.take(invitation, at: Self.t0) == .show)
        for n in 1...5 {
            #expect(summary.take(.invitationEnded(Self.bob, reason: "expired"), at: Self.t0 + .seconds(10 * n)) == .dropped)
            #expect(summary.take(invitation, at: Self.t0 + .seconds(10 * n)) == .dropped)
        }
        #expect(summary.take(.invitation(Self.carol, direction: "received", contextBytes: 0, awaitsAnswer: true), at: Self.t0) == .show)
        // Lost and found again: a new appearance, so its invitation is shown again.
        _ = summary.take(.lost(Self.bob), at: Self.t0 + .seconds(60))
        #expect(summary.take(invitation, at: Self.t0 + .seconds(61)) == .show)
        _ = summary.take(Self.connected(Self.bob), at: Self.t0 + .seconds(62))
        #expect(summary.take(.invitationEnded(Self.bob, reason: "answered"), at: Self.t0 + .seconds(62)) == .show)
    }

    @Test("names: one, two, three, and two with the rest counted", arguments: [
        (["bob"], "bob"), (["bob", "carol"], "bob and carol"), (["bob", "carol", "dave"], "bob, carol and dave"),
        (["bob", "carol", "dave", "erin", "frank"], "bob, carol and 3 others"),
    ])
    func names(_ names: [String], _ expected: String) {
        #expect(PresenceSummary.list(names) == expected)
    }
}

/// Presence lines beside chat lines and the names in a summary.
@Suite("presence summary: order and names")
struct PresenceOrderTests {
    typealias P = PresenceSummaryTests

    @Test("a line from a peer whose 'connected' is held comes after it: release gives that peer's line and keeps the others held")
    func releaseBeforeLine() {
        var summary = PresenceSummary()
        _ = summary.take(P.connected(P.bob), at: P.t0)
        _ = summary.take(P.connected(P.carol), at: P.t0)
        let line = ChatOutput.message(id: "x", from: P.bob, text: "hi", sentAt: Date())
        #expect(summary.take(line, at: P.t0) == .show)
        #expect(P.text(summary.release(before: line)) == "* bob (01010101) connected at 10.0.0.1:7000")
        #expect(summary.release(before: line) == nil, "released once")
        #expect(summary.release(before: .message(id: "y", from: P.dave, text: "?", sentAt: Date())) == nil)
        #expect(P.text(summary.flush(at: P.t0 + PresenceSummary.window)) == "* carol (02020202) connected at 10.0.0.1:7000")
    }

    @Test("a summary of several peers names them as everywhere else: a new key claiming a held name is flagged, a verified peer marked")
    func summaryNamesMarked() {
        var summary = PresenceSummary()
        _ = summary.take(P.connected(TrustMarksTests.impostor), at: P.t0)
        _ = summary.take(P.connected(TrustMarksTests.carol), at: P.t0)
        let line = PeerMarks.$book.withValue(TrustMarksTests.book) { summary.flush(at: P.t0 + PresenceSummary.window) }
        #expect(P.text(line) == "* Bob (new key 620da8ed) and carol ✓ joined")
    }
}
