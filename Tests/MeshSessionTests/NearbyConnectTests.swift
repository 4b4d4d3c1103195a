import Foundation
import MeshLink
@testable import MeshSession
import MeshTestSupport
import NIOCore
import Testing

/// Runs `body`, then stops the nodes, also when it throws.
func stopping(_ nodes: Node..., body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        for node in nodes { await node.stop() }
        throw error
    }
    for node in nodes { await node.stop() }
}

extension EventReader {
    /// The next `connectFailed` or `connected` event: the outcome of one dial.
    mutating func outcome(timeout: Duration = .seconds(10)) async throws -> Result<PeerID, ConnectFailure> {
        try await next(timeout: timeout) { event -> Result<PeerID, ConnectFailure>? in
            switch event {
            case .peerChanged(let peer, .connected): .success(peer)
            case .connectFailed(let address, let reason): .failure(ConnectFailure(address: address, reason: reason))
            default: nil
            }
        }
    }
}

struct ConnectFailure: Error, Equatable {
    let address: String
    let reason: String
}

/// Out-of-band connection over loopback sockets (PROTOCOL.md §4.10).
@Suite("Nearby connection data over loopback", .serialized)
struct NearbyConnectTests {
    /// Connects `a` to `b` with `b`'s own data (through its text form) and waits until both report it.
    /// - Returns: the data.
    static func connectByData(_ a: Node, _ b: Node, _ aEvents: inout EventReader, _ bEvents: inout EventReader,
                              redial: Bool) async throws -> NearbyConnectionData {
        let data = try b.session.nearbyConnectionData()
        a.session.connectPeer(withNearbyConnectionData: try NearbyConnectionData(text: data.text), redial: redial)
        #expect(try await aEvents.outcome() == .success(b.id))
        #expect(try await bEvents.connected() == a.id)
        return data
    }

    @Test("a node's own data connects to it: both sides report connected, and the data names its id and port")
    func connects() async throws {
        let a = try await Node("a")
        let b = try await Node("b")
        var aEvents = EventReader(a)
        var bEvents = EventReader(b)
        try await stopping(a, b) {
            let data = try await Self.connectByData(a, b, &aEvents, &bEvents, redial: false)
            #expect(data.nodeID == b.id.id && data.port == b.port && data.addresses == ["127.0.0.1"])
            #expect(a.session.redialedAddresses.isEmpty)
        }
    }

    @Test("addresses are dialled in order: a refused first address is passed over without an event")
    func fallsBack() async throws {
        let a = try await Node("a")
        let b = try await Node("b")
        var aEvents = EventReader(a)
        try await stopping(a, b) {
            // Nothing listens on 127.0.0.2 (b is bound to 127.0.0.1): refused at once.
            let data = try NearbyConnectionData(nodeID: b.id.id, port: b.port, addresses: ["127.0.0.2", "127.0.0.1"])
            a.session.connectPeer(withNearbyConnectionData: data)
            #expect(try await aEvents.outcome() == .success(b.id))
        }
    }

    @Test("data naming another identity is refused during the handshake: connectFailed says the identity differs, and neither side reports connected")
    func identityDiffers() async throws {
        let a = try await Node("a")
        let b = try await Node("b")
        let c = try await Node("c")
        var aEvents = EventReader(a)
        var bEvents = EventReader(b)
        try await stopping(a, b, c) {
            // c's identity at b's address.
            let data = try NearbyConnectionData(nodeID: c.id.id, port: b.port, addresses: ["127.0.0.1"])
            a.session.connectPeer(withNearbyConnectionData: data)
            guard case .failure(let failure) = try await aEvents.outcome() else {
                Issue.record("connected to a node with another identity")
                return
            }
            #expect(failure.address == "127.0.0.1:\(b.port)")
            #expect(failure.reason.contains("invalidIdentity") && failure.reason.contains("identity differs"), "\(failure.reason)")
            #expect(failure.reason.contains(c.id.id.shortHex) && failure.reason.contains(b.id.id.shortHex))
            #expect(a.session.connectedPeers.isEmpty && b.session.connectedPeers.isEmpty)
            // b's first connection is c's, made after a's refusal: a's link never reached b's application.
            c.session.connect(host: "127.0.0.1", port: b.port)
            #expect(try await bEvents.connected() == c.id)
        }
    }

    @Test("connectPeer(_:withNearbyConnectionData:) connects to the data's peer, and dials nothing for another peer's data")
    func peerOverload() async throws {
        let a = try await Node("a")
        let b = try await Node("b")
        let c = try await Node("c")
        var aEvents = EventReader(a)
        try await stopping(a, b, c) {
            let data = try b.session.nearbyConnectionData()
            a.session.connectPeer(c.id, withNearbyConnectionData: data)
            guard case .failure(let failure) = try await aEvents.outcome() else {
                Issue.record("connected with another peer's data")
                return
            }
            #expect(failure.reason.contains("not c (") && failure.reason.contains(b.id.id.shortHex), "\(failure.reason)")
            a.session.connectPeer(b.id, withNearbyConnectionData: data)
            #expect(try await aEvents.outcome() == .success(b.id))
        }
    }

    @Test("every address failing gives one connectFailed with each address's reason")
    func allFail() async throws {
        let a = try await Node("a")
        let closed = try await Node("closed")
        let port = closed.port
        await closed.stop()
        var aEvents = EventReader(a)
        try await stopping(a) {
            let data = try NearbyConnectionData(nodeID: NodeID.random(), port: port, addresses: ["127.0.0.2", "127.0.0.1"])
            a.session.connectPeer(withNearbyConnectionData: data)
            guard case .failure(let failure) = try await aEvents.outcome() else {
                Issue.record("connected to nothing")
                return
            }
            #expect(failure.address == "127.0.0.2:\(port)")
            #expect(failure.reason.contains("127.0.0.2:\(port): ") && failure.reason.contains("; 127.0.0.1:\(port): "), "\(failure.reason)")
        }
    }

    @Test("kept with redial, the link is listed under the first address and comes back after the peer drops it")
    func redial() async throws {
        let a = try await Node("a")
        let b = try await Node("b")
        var aEvents = EventReader(a)
        var bEvents = EventReader(b)
        try await stopping(a, b) {
            _ = try await Self.connectByData(a, b, &aEvents, &bEvents, redial: true)
            #expect(a.session.redialedAddresses == ["127.0.0.1:\(b.port)"])
            b.session.disconnect(a.id)
            _ = try await aEvents.disconnectReason()
            #expect(try await aEvents.outcome(timeout: .seconds(15)) == .success(b.id))
            #expect(a.session.stopRedialing(host: "127.0.0.1", port: b.port))
        }
    }

    @Test("before start there is no data; the addresses of a wildcard listener put loopback last and leave out link-local IPv6")
    func addresses() throws {
        let session = Session(peer: try LocalPeer(displayName: "x", identity: try LocalIdentity.generate()))
        #expect(throws: SessionError.notRunning()) { _ = try session.nearbyConnectionData() }
        let interfaces = try ["127.0.0.1", "192.168.1.5", "fe80::1", "2001:db8::5", "::1", "10.0.0.1", "192.168.1.5"]
            .map { Optional(try SocketAddress(ipAddress: $0, port: 0)) }
        let any6 = try SocketAddress(ipAddress: "::", port: 7000)
        #expect(Session.nearbyAddresses(listeningOn: any6, interfaces: interfaces) == ["192.168.1.5", "10.0.0.1", "2001:db8::5", "127.0.0.1"])
        let any4 = try SocketAddress(ipAddress: "0.0.0.0", port: 7000)
        #expect(Session.nearbyAddresses(listeningOn: any4, interfaces: interfaces) == ["192.168.1.5", "10.0.0.1", "127.0.0.1"])
        let many = try (1...20).map { Optional(try SocketAddress(ipAddress: "10.0.1.\($0)", port: 0)) }
        let bounded = Session.nearbyAddresses(listeningOn: any4, interfaces: many)
        #expect(bounded.count == NearbyConnectionData.maxAddresses && bounded.last == "127.0.0.1")
        let one = try SocketAddress(ipAddress: "192.0.2.9", port: 7000)
        #expect(Session.nearbyAddresses(listeningOn: one, interfaces: interfaces) == ["192.0.2.9"])
    }
}
