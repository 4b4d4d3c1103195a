import MeshSession
import Testing

@Suite("AutoInvitePolicy (PROTOCOL.md §12.4)")
struct AutoInvitePolicyTests {
    static let low = try! PeerID(id: NodeID(hex: "00000000000000000000000000000001"), displayName: "low")
    static let high = try! PeerID(id: NodeID(hex: "ffffffffffffffffffffffffffffffff"), displayName: "high")

    @Test("the lower id invites at once; the higher waits for the fallback delay")
    func tieBreak() {
        var lowSide = AutoInvitePolicy(local: Self.low)
        var highSide = AutoInvitePolicy(local: Self.high)
        #expect(lowSide.found(Self.high) == [.invite(Self.high)])
        guard case .startTimer(let peer, let delay, let generation)? = highSide.found(Self.low).first else {
            Issue.record("no timer"); return
        }
        #expect(peer == Self.low && delay == AutoInvitePolicy.fallbackDelay)
        // The low side's invitation connected first: the fallback does nothing.
        #expect(highSide.peerChanged(Self.low, .connected).isEmpty)
        #expect(highSide.timerFired(for: Self.low, generation: generation).isEmpty)
    }

    @Test("without the other side's invitation the higher id invites after the delay")
    func fallback() {
        var highSide = AutoInvitePolicy(local: Self.high)
        guard case .startTimer(_, _, let generation)? = highSide.found(Self.low).first else { Issue.record("no timer"); return }
        #expect(highSide.timerFired(for: Self.low, generation: generation) == [.invite(Self.low)])
    }

    @Test("found again while inviting or connected does not invite twice")
    func once() {
        var policy = AutoInvitePolicy(local: Self.low)
        #expect(policy.found(Self.high) == [.invite(Self.high)])
        #expect(policy.found(Self.high).isEmpty)
        _ = policy.peerChanged(Self.high, .connected)
        #expect(policy.found(Self.high).isEmpty)
    }

    @Test("failures back off 1, 2, 4 … 30 s; a decline stops retries until found anew")
    func retries() {
        #expect(AutoInvitePolicy.retryDelay(after: 1) == .seconds(1))
        #expect(AutoInvitePolicy.retryDelay(after: 3) == .seconds(4))
        #expect(AutoInvitePolicy.retryDelay(after: 20) == .seconds(30))
        var policy = AutoInvitePolicy(local: Self.low)
        _ = policy.found(Self.high)
        let retry = policy.invitationFailed(Self.high, InvitationFailure(.unreachable, "refused"))
        guard case .startTimer(_, let delay, let generation)? = retry.first else { Issue.record("no retry"); return }
        #expect(delay == .seconds(1))
        #expect(policy.timerFired(for: Self.high, generation: generation) == [.invite(Self.high)])
        #expect(policy.invitationFailed(Self.high, InvitationFailure(.declined, "no")).isEmpty)
        #expect(policy.found(Self.high) == [.invite(Self.high)])
    }

    @Test("a disconnected peer that is still found is invited again after 1 s; a lost one is not")
    func reconnect() {
        var policy = AutoInvitePolicy(local: Self.low)
        _ = policy.found(Self.high)
        _ = policy.peerChanged(Self.high, .connected)
        let actions = policy.peerChanged(Self.high, .notConnected(nil))
        guard case .startTimer(_, let delay, let generation)? = actions.first else { Issue.record("no timer"); return }
        #expect(delay == .seconds(1))
        policy.lost(Self.high)
        #expect(policy.timerFired(for: Self.high, generation: generation).isEmpty)
    }
}

@Suite("AutoInvitePolicy after a goodbye")
struct AutoInviteGoodbyeTests {
    @Test("a peer that left with a normal goodbye is not invited again until it is found anew")
    func leftOnPurpose() {
        var policy = AutoInvitePolicy(local: AutoInvitePolicyTests.low)
        let high = AutoInvitePolicyTests.high
        _ = policy.found(high)
        _ = policy.peerChanged(high, .connected)
        let goodbye = DisconnectReason(code: "normal", message: "the peer disconnected", isRemote: true)
        #expect(policy.peerChanged(high, .notConnected(goodbye)).isEmpty)
        #expect(policy.found(high) == [.invite(high)])
        // A failed link (not a goodbye) is retried.
        _ = policy.peerChanged(high, .connected)
        let dead = DisconnectReason(code: "keepaliveTimeout", message: "silence", isRemote: false)
        guard case .startTimer? = policy.peerChanged(high, .notConnected(dead)).first else { Issue.record("no retry"); return }
    }
}
