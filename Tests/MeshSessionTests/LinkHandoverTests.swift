import Foundation
import MeshDiscovery
@testable import MeshSession
import MeshTestSupport
import NIOConcurrencyHelpers
import Testing

/// The duplicate-link rule (PROTOCOL.md §4.7) seen from the application: when both nodes open a
/// link at once and the peer retires the one this node reported, the application never sees the
/// peer go and come back, even when the winning link is admitted here only after the goodbye on
/// the losing one (two connections, no order between them).
@Suite("Link handover (§4.7)")
struct LinkHandoverTests {
    /// Two nodes linked by the higher id's dial; then the lower id invites the higher one, which
    /// accepts at once: it writes the acceptance on the new link (the tie-break's winner) and retires
    /// the first. The acceptance is held up on the way, so the lower id reads the goodbye first.
    /// Returns once the lower id waits for the link that replaces the retired one.
    private static func lateAcceptance(_ mesh: TestMesh) async throws -> (low: TestNode, high: TestNode) {
        let first = try await mesh.node("first"), second = try await mesh.node("second")
        // The link the lower id dials wins the tie-break.
        let (low, high) = first.peer.id < second.peer.id ? (first, second) : (second, first)
        // The higher id's link comes first: both report the other connected over it.
        try await mesh.link(high, low)
        high.session.invitationObserver.withLockedValue { observer in
            observer = { notice in
                guard case .received(let invitation) = notice else { return }
                mesh.fabric.stall(from: high.host, to: low.host, dialledBy: low.host)
                invitation.accept()
            }
        }
        let endpoint = Endpoint(address: high.host, port: high.port, interfaceName: "", ipProtocol: .ipv4)
        low.session.invite(high.peer, endpoints: [endpoint], context: Data(), timeout: .seconds(30))
        try await mesh.waitUntil("the lower id reads the goodbye on the first link") {
            low.logs.all.contains { $0.contains("waiting for the link that replaces it") }
        }
        return (low, high)
    }

    @Test("the peer retires this node's link for an invitation link whose acceptance comes late: one connected event, no notConnected")
    func lateAcceptance() async throws {
        try await withTestMesh { mesh in
            let (low, high) = try await Self.lateAcceptance(mesh)
            await mesh.fabric.release(from: high.host, to: low.host)
            try await mesh.waitUntil("the invitation link takes over") {
                low.logs.all.contains { $0.contains("a link took over from the one the peer retired") }
            }

            // One link, one connected event each, never a notConnected; data goes both ways.
            for (node, other) in [(low, high), (high, low)] {
                let connected = node.events.filter { if case .peerChanged(let peer, .connected) = $0 { peer.id == other.peer.id } else { false } }
                let gone = node.events.filter { if case .peerChanged(_, .notConnected) = $0 { true } else { false } }
                #expect(connected.count == 1, "\(node): \(connected.count) connected events")
                #expect(gone.isEmpty, "\(node) saw \(gone)")
                #expect(node.session.connectedPeers.map(\.id) == [other.peer.id])
            }
            try await low.session.send(Data("after the handover".utf8), to: [high.peer], mode: .reliable)
            try await mesh.waitUntil("the line arrives") {
                high.saw { if case .received(let message) = $0 { message.content == .data(Data("after the handover".utf8)) } else { false } }
            }
        }
    }

    @Test("when no link takes over within the grace, the peer is reported gone once it has passed")
    func noSuccessor() async throws {
        try await withTestMesh { mesh in
            let (low, _) = try await Self.lateAcceptance(mesh)
            let isGone: @Sendable (SessionEvent) -> Bool = { if case .peerChanged(_, .notConnected) = $0 { true } else { false } }
            await mesh.advance(by: Session.handoverGrace - .milliseconds(100))
            #expect(!low.saw(isGone), "reported gone before the grace passed")
            try await mesh.advance(until: "the peer is reported gone", limit: .seconds(1)) { low.saw(isGone) }
        }
    }
}
