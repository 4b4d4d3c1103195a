import Foundation
import Logging
import MeshLink
import MeshTransport
import MeshWire
import NIOCore
import NIOPosix
import Testing

/// Cipher suites over real loopback sockets (PROTOCOL.md §4.11, §5, §8): two transports whose
/// offers are forced end up on the suite the offers select, and messages (TCP) and datagrams (UDP)
/// go both ways under it.
@Suite("Cipher suites over real sockets")
struct SuiteLinkTests {
    static let logger = Logger(label: "suite-link-test")

    struct Case: Sendable, CustomTestStringConvertible {
        var initiator: [CipherSuite]
        var responder: [CipherSuite]
        var expected: CipherSuite
        var testDescription: String { "\(initiator) dials \(responder): \(expected)" }
    }

    @Test("the link runs the suite both offers select, and carries messages and datagrams both ways", arguments: [
        Case(initiator: [.aesGCM, .chaChaPoly], responder: [.aesGCM, .chaChaPoly], expected: .aesGCM),
        Case(initiator: [.chaChaPoly], responder: [.aesGCM, .chaChaPoly], expected: .chaChaPoly),
        Case(initiator: [.aesGCM, .chaChaPoly], responder: [.chaChaPoly], expected: .chaChaPoly),  // via RETRY
    ])
    func link(_ test: Case) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        do {
            try await Self.run(test, group: group)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    static func run(_ test: Case, group: MultiThreadedEventLoopGroup) async throws {
        let (toA, toAContinuation) = AsyncStream.makeStream(of: DatagramEndpoint.Received.self)
        let (toB, toBContinuation) = AsyncStream.makeStream(of: DatagramEndpoint.Received.self)
        let udpA = try await DatagramEndpoint.bind(group: group, host: "127.0.0.1", port: 0, logger: logger) { toAContinuation.yield($0) }
        let udpB = try await DatagramEndpoint.bind(group: group, host: "127.0.0.1", port: 0, logger: logger) { toBContinuation.yield($0) }
        // The datagram streams end after 10 s at the latest: a lost datagram fails the test, never hangs it.
        let deadline = group.next().scheduleTask(in: .seconds(10)) {
            toAContinuation.finish()
            toBContinuation.finish()
        }
        defer {
            deadline.cancel()
            toAContinuation.finish()
            toBContinuation.finish()
        }

        func configuration(_ name: String, _ suites: [CipherSuite], udpPort: Int) throws -> HandshakeStateMachine.Configuration {
            var configuration = HandshakeStateMachine.Configuration(
                identity: try .generate(), displayName: name, udpPort: UInt16(udpPort), capabilities: ["udp"])
            configuration.suites = suites
            return configuration
        }
        let server = TCPTransport(group: group, handshake: try configuration("b", test.responder, udpPort: udpB.port), logger: logger)
        let client = TCPTransport(group: group, handshake: try configuration("a", test.initiator, udpPort: udpA.port), logger: logger)
        let listener = try await server.listen(host: "127.0.0.1", port: 0)
        let port = try #require(listener.channel.localAddress?.port)
        let clientLink = try await client.connect(host: "127.0.0.1", port: port)

        try await listener.executeThenClose { accepted in
            var connections = accepted.makeAsyncIterator()
            let serverLink = try #require(try await connections.next())
            try await serverLink.executeThenClose { serverEvents, serverWriter in
                try await clientLink.executeThenClose { clientEvents, clientWriter in
                    // Every wait below ends: a link that stops making progress is closed by its own
                    // handshake timeout (10 s) or liveness check (3 s), which ends its event stream.
                    var fromServer = serverEvents.makeAsyncIterator()
                    var fromClient = clientEvents.makeAsyncIterator()
                    let serverInfo = try #require(try await Self.established(&fromServer))
                    let clientInfo = try #require(try await Self.established(&fromClient))
                    #expect(serverInfo.datagramKeys.cipher == test.expected.cipher)
                    #expect(clientInfo.datagramKeys.cipher == test.expected.cipher)
                    #expect(serverInfo.suite == test.expected && clientInfo.suite == test.expected)

                    try await clientWriter.write(.data(Data("a to b".utf8)))
                    #expect(try await Self.envelope(&fromServer) == .data(Data("a to b".utf8)))
                    try await serverWriter.write(.data(Data("b to a".utf8)))
                    #expect(try await Self.envelope(&fromClient) == .data(Data("b to a".utf8)))

                    udpA.register(node: clientInfo.peer.nodeID, keys: clientInfo.datagramKeys,
                                  address: try SocketAddress(ipAddress: "127.0.0.1", port: udpB.port))
                    udpB.register(node: serverInfo.peer.nodeID, keys: serverInfo.datagramKeys,
                                  address: try SocketAddress(ipAddress: "127.0.0.1", port: udpA.port))
                    #expect(try udpA.send(Data("datagram a to b".utf8), to: clientInfo.peer.nodeID))
                    var atB = toB.makeAsyncIterator()
                    let received = try #require(await atB.next(), "no datagram reached b within 10 s")
                    #expect(received.payload == Data("datagram a to b".utf8))
                    #expect(received.from == serverInfo.peer.nodeID)
                    #expect(try udpB.send(Data("datagram b to a".utf8), to: serverInfo.peer.nodeID))
                    var atA = toA.makeAsyncIterator()
                    let back = try #require(await atA.next(), "no datagram reached a within 10 s")
                    #expect(back.payload == Data("datagram b to a".utf8))
                }
            }
        }
        await udpA.close()
        await udpB.close()
    }

    /// The link's established event, or `nil` when it closed first.
    static func established(_ events: inout NIOAsyncChannelInboundStream<LinkEvent>.AsyncIterator) async throws -> LinkInfo? {
        while let event = try await events.next() {
            switch event {
            case .established(let info): return info
            case .closed(let reason):
                Issue.record("the link closed before it was established: \(reason)")
                return nil
            default: continue
            }
        }
        return nil
    }

    /// The next application envelope, or `nil` when the link closed first.
    static func envelope(_ events: inout NIOAsyncChannelInboundStream<LinkEvent>.AsyncIterator) async throws -> Envelope? {
        while let event = try await events.next() {
            switch event {
            case .envelope(let envelope): return envelope
            case .closed(let reason):
                Issue.record("the link closed: \(reason)")
                return nil
            default: continue
            }
        }
        return nil
    }
}
