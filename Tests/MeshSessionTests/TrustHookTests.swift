import Crypto
import Foundation
import MeshLink
import MeshSession
import MeshTestSupport
import NIOConcurrencyHelpers
import Testing

/// The identities a trust hook was asked about.
final class AskedIdentities: Sendable {
    private let asked = NIOLockedValueBox<[PeerIdentity]>([])
    func record(_ identity: PeerIdentity) { asked.withLockedValue { $0.append(identity) } }
    var all: [PeerIdentity] { asked.withLockedValue { $0 } }
}

/// The trust hook, `Session.Configuration.admitPeer` (PROTOCOL.md §4.9), over loopback sockets.
@Suite("Trust hook over loopback", .serialized)
struct TrustHookTests {
    @Test("a hook that admits is asked once per side with the proved identity, and the peers connect")
    func admits() async throws {
        let askedA = AskedIdentities()
        let askedB = AskedIdentities()
        let a = try await Node("a") { $0.admitPeer = { askedA.record($0); return true } }
        let b = try await Node("b") { $0.admitPeer = { askedB.record($0); return true } }
        var aEvents = EventReader(a)
        var bEvents = EventReader(b)
        try await stopping(a, b) {
            a.session.connect(host: "127.0.0.1", port: b.port)
            #expect(try await aEvents.outcome() == .success(b.id))
            #expect(try await bEvents.connected() == a.id)
            let fromA = try #require(askedA.all.first)
            let fromB = try #require(askedB.all.first)
            #expect(askedA.all.count == 1 && askedB.all.count == 1)
            #expect(fromA.peer == b.id && fromA.peer.displayName == "b" && fromA.isDialled)
            #expect(fromA.remoteAddress == "127.0.0.1:\(b.port)")
            #expect(fromB.peer == a.id && !fromB.isDialled && fromB.identityKey.count == 32)
            #expect(fromB.identityKey == a.session.peer.identity.signingKey.publicKey.rawRepresentation)
        }
    }

    @Test("the listener's hook refusing: the dialler reports notConnected with notAdmitted and its reason, and neither side is connected")
    func listenerRefuses() async throws {
        let a = try await Node("a")
        let b = try await Node("b") { $0.admitPeer = { _ in false } }
        let c = try await Node("c")
        var aEvents = EventReader(a)
        var bEvents = EventReader(b)
        try await stopping(a, b, c) {
            a.session.connect(host: "127.0.0.1", port: b.port)
            let reason = try await aEvents.disconnectReason()
            #expect(reason.code == "notAdmitted" && reason.isRemote, "\(reason)")
            #expect(reason.message.contains("did not admit"), "\(reason)")
            guard case .failure(let failure) = try await aEvents.outcome() else {
                Issue.record("connected although refused")
                return
            }
            #expect(failure.reason.contains("notAdmitted"))
            #expect(a.session.connectedPeers.isEmpty && b.session.connectedPeers.isEmpty)
            // b's hook refuses everyone: c too, and b never reports anyone connected.
            var cEvents = EventReader(c)
            c.session.connect(host: "127.0.0.1", port: b.port)
            _ = try await cEvents.disconnectReason()
            b.session.connect(host: "127.0.0.1", port: c.port)
            guard case .failure = try await bEvents.outcome() else {
                Issue.record("b connected although its hook refuses")
                return
            }
        }
    }

    @Test("the dialler's hook refusing: connectFailed with notAdmitted, and the listener never reports it connected")
    func diallerRefuses() async throws {
        let a = try await Node("a") { $0.admitPeer = { _ in false } }
        let b = try await Node("b")
        let c = try await Node("c")
        var aEvents = EventReader(a)
        var bEvents = EventReader(b)
        try await stopping(a, b, c) {
            a.session.connect(host: "127.0.0.1", port: b.port)
            guard case .failure(let failure) = try await aEvents.outcome() else {
                Issue.record("connected although refused")
                return
            }
            #expect(failure.reason.contains("notAdmitted") && failure.reason.contains("did not admit"), "\(failure.reason)")
            #expect(b.session.connectedPeers.isEmpty)
            c.session.connect(host: "127.0.0.1", port: b.port)
            #expect(try await bEvents.connected() == c.id)
        }
    }

    @Test("a hook that never returns refuses the link after the admission timeout")
    func timesOut() async throws {
        let a = try await Node("a")
        let b = try await Node("b") {
            $0.admissionTimeout = .milliseconds(200)
            $0.admitPeer = { _ in
                try? await Task.sleep(for: .seconds(3_600))
                return true
            }
        }
        var aEvents = EventReader(a)
        try await stopping(a, b) {
            let started = ContinuousClock.now
            a.session.connect(host: "127.0.0.1", port: b.port)
            let reason = try await aEvents.disconnectReason()
            #expect(reason.code == "notAdmitted" && reason.message.contains("did not decide within"), "\(reason)")
            // Well before the 10 s handshake deadline: the admission timeout refused it.
            #expect(ContinuousClock.now - started < .seconds(8))
            #expect(b.session.connectedPeers.isEmpty)
        }
    }
}
