import Crypto
import Foundation
import MeshLink
import MeshRouting
@testable import MeshSession
import MeshWire
import NIOCore
import NIOEmbedded
import Testing

/// The shell around the node's value: its clock is an event loop's, and it holds whoever waits
/// for a pong. Two shells wired by hand, no sockets.
@Suite("Mesh node shell")
struct MeshNodeShellTests {
    /// Hands a step's packets to the shells they are for, breadth first, until nothing moves.
    static func pump(_ step: MeshNode.Step, from origin: MeshNode, nodes: [MeshNode]) {
        var queue = step.sends.map { (to: $0.0, from: origin.identity.nodeID, routed: $0.1) }
        while !queue.isEmpty {
            let (to, from, routed) = queue.removeFirst()
            guard let node = nodes.first(where: { $0.identity.nodeID == to }) else { continue }
            queue += node.received(routed, from: from).sends.map { (to: $0.0, from: to, routed: $0.1) }
        }
    }

    /// Two shells on one virtual-time loop, linked as an admitted link would.
    static func pair(loop: EmbeddedEventLoop) -> (MeshNode, MeshNode) {
        let nodes = (0..<2).map {
            MeshNode(peer: MeshNodeStateMachineTests.peer($0), configuration: RoutingConfiguration(),
                     logger: MeshNodeStateMachineTests.logger, clock: loop)
        }
        let (a, b) = (nodes[0], nodes[1])
        let up = [(a, b), (b, a)].map { here, there in
            (here, here.neighborUp(there.me, staticKey: there.identity.staticKey.publicKey.rawRepresentation, latency: nil))
        }
        for (node, step) in up { pump(step, from: node, nodes: [a, b]) }
        return (a, b)
    }

    @Test("the node's clock is its event loop's: virtual time under an EmbeddedEventLoop")
    func virtualTime() {
        let loop = EmbeddedEventLoop()
        let (a, _) = Self.pair(loop: loop)
        #expect(a.now == .zero)
        loop.advanceTime(by: .seconds(42))
        #expect(a.now.offset == .seconds(42))
        #expect(a.route(to: MeshNodeStateMachineTests.peer(1).identity.nodeID)?.hops == 1)
    }

    @Test("a pong resumes whoever waits for its ping; a cancel resumes the waiter with false")
    func pingWaiters() async throws {
        let loop = EmbeddedEventLoop()
        let (a, b) = Self.pair(loop: loop)
        var ping = Meshchat_V1_Ping()
        ping.nonce = a.startPing()
        let step = try #require(try a.sendSealed(.ping(ping), to: b.identity.nodeID))
        async let answered = a.waitForPong(ping.nonce)
        Self.pump(step, from: a, nodes: [a, b])
        #expect(await answered)
        // Taken once: a second wait for the same nonce finds nothing.
        #expect(await a.waitForPong(ping.nonce) == false)

        let other = a.startPing()
        async let cancelled = a.waitForPong(other)
        a.cancelPing(other)
        #expect(await cancelled == false)
    }
}
