import Logging
import MeshTransport
import MeshWire
import NIOConcurrencyHelpers
import NIOCore

/// One link dialled for nearby connection data: why it failed, and the kept address it serves.
final class NearbyAttempt: Sendable {
    /// The address kept with ``Session/connectPeer(withNearbyConnectionData:redial:)`` and its token.
    let kept: (address: String, token: UInt64)?
    private let reason = NIOLockedValueBox<String?>(nil)

    init(kept: (address: String, token: UInt64)?) { self.kept = kept }

    /// Records why the link ended before it was established.
    func failed(_ why: String) { reason.withLockedValue { $0 = why } }
    /// Why the link ended before it was established, if it did.
    var failure: String? { reason.withLockedValue { $0 } }
}

extension Session {
    // MARK: Out-of-band connection (PROTOCOL.md §4.10)

    /// What another node needs to connect to this one without discovery (Multipeer's
    /// `nearbyConnectionData(forPeer:)`): this node's addresses, its port and its node id.
    ///
    /// The addresses are those the listener is reachable on: with the default host (`::`, or
    /// `0.0.0.0`) every non-loopback address of this host's interfaces, IPv4 first, then the
    /// loopback address last (for a peer on the same host), at most
    /// ``NearbyConnectionData/maxAddresses``; IPv6 link-local addresses are left out (their scope
    /// means nothing on another host). With a specific host, that address alone. Pass the result
    /// as ``NearbyConnectionData/text`` (typed, pasted, a QR code) or its
    /// ``NearbyConnectionData/rawRepresentation`` to the other node's
    /// ``connectPeer(withNearbyConnectionData:redial:)``.
    /// - Parameter peer: the peer the data is for (Multipeer's argument); the data is the same for
    ///   every peer, so it may be `nil`.
    /// - Returns: the data.
    /// - Throws: ``SessionError`` `notRunning` before ``start()``; `invalidAddress` when the
    ///   listener has no address another host could dial.
    public func nearbyConnectionData(for peer: PeerID? = nil) throws(SessionError) -> NearbyConnectionData {
        guard let bound = sockets.withLockedValue({ $0.map { ($0.server.channel.localAddress, $0.port) } }) else {
            throw .notRunning()
        }
        let interfaces = ((try? System.enumerateDevices()) ?? []).map(\.address)
        let addresses = Self.nearbyAddresses(listeningOn: bound.0, interfaces: interfaces)
        do {
            return try NearbyConnectionData(nodeID: localID, port: bound.1, addresses: addresses)
        } catch {
            throw .invalidAddress(bound.0.map(Self.format) ?? "?", "no address another host could dial: \(error)")
        }
    }

    /// Connects to the node that made `data` (Multipeer's `connectPeer(_:withNearbyConnectionData:)`).
    /// Returns at once; the outcome is an event.
    ///
    /// The addresses are dialled one after another, in order, until one gives a link (an address
    /// that does not answer costs up to the transport's connect timeout, 5 s by default, before the
    /// next is tried; a refused one costs nothing); a link whose peer proves
    /// another identity than ``NearbyConnectionData/nodeID`` is refused during the handshake
    /// (`invalidIdentity`, "identity differs"), so neither side reports it connected, and the next
    /// address is tried. Success is ``SessionEvent/peerChanged(_:_:)`` with ``PeerState/connected``;
    /// failure one ``SessionEvent/connectFailed(address:reason:)`` naming the first address, with
    /// every address's reason. With `redial`, the link is kept as ``connect(host:port:redial:)``
    /// keeps one, under the first address (``redialedAddresses``, ``stopRedialing(host:port:)``),
    /// and every redial checks the identity again.
    /// - Parameters:
    ///   - data: the other node's data, from its ``nearbyConnectionData(for:)``.
    ///   - redial: whether to keep the link.
    public func connectPeer(withNearbyConnectionData data: NearbyConnectionData, redial: Bool = false) {
        if redial {
            keep(host: data.addresses[0], port: data.port, nearby: data)
        } else {
            commandSink.yield(.nearby(data))
        }
    }

    /// Connects to a peer with its nearby connection data, in Multipeer's shape
    /// (`connectPeer(_:withNearbyConnectionData:)`): as ``connectPeer(withNearbyConnectionData:redial:)``
    /// when the data is the peer's; otherwise nothing is dialled and the outcome is a
    /// ``SessionEvent/connectFailed(address:reason:)`` saying whose data it is.
    /// - Parameters:
    ///   - peer: the peer the application means.
    ///   - data: that peer's data, from its ``nearbyConnectionData(for:)``.
    ///   - redial: whether to keep the link.
    public func connectPeer(_ peer: PeerID, withNearbyConnectionData data: NearbyConnectionData, redial: Bool = false) {
        guard peer.id == data.nodeID else {
            let address = Self.format(host: data.addresses[0], port: data.port)
            _ = events.offer(.connectFailed(address: address, reason: "the connection data is node \(data.nodeID.shortHex)'s, not \(peer)'s"))
            return
        }
        connectPeer(withNearbyConnectionData: data, redial: redial)
    }

    /// Dials nearby connection data's addresses in order (the task behind
    /// ``connectPeer(withNearbyConnectionData:redial:)``).
    /// - Parameters:
    ///   - quiet: report no ``SessionEvent/connectFailed(address:reason:)`` (a redial).
    ///   - kept: the kept address and its token, for a redial.
    /// - Returns: the peer, when a link was established (it has ended by now).
    @discardableResult
    func dial(_ data: NearbyConnectionData, transport: TCPTransport, quiet: Bool = false,
              kept: (address: String, token: UInt64)? = nil) async -> PeerID? {
        var failures: [String] = []
        for host in data.addresses {
            if let kept, redials.withLockedValue({ $0.entries[kept.address]?.token != kept.token }) { return nil }
            let address = Self.format(host: host, port: data.port)
            let link: LinkChannel
            do {
                link = try await transport.connect(host: host, port: data.port, expecting: data.nodeID)
            } catch {
                failures.append("\(address): \(Self.describe(error))")
                continue
            }
            let attempt = NearbyAttempt(kept: kept)
            if let peer = await serve(link, purpose: .nearby(attempt)) { return peer }
            failures.append("\(address): \(attempt.failure ?? "the link closed")")
        }
        let first = Self.format(host: data.addresses[0], port: data.port)
        logger.debug("nearby connect failed", metadata: ["mesh.peer": "\(data.nodeID)", "link.remote": "\(first)",
                                                          "error": "\(failures.joined(separator: "; "))"])
        if !quiet { await events.push(.connectFailed(address: first, reason: failures.joined(separator: "; "))) }
        return nil
    }

    /// The addresses to put in this node's nearby connection data (see ``nearbyConnectionData(for:)``).
    /// - Parameters:
    ///   - bound: the listener's local address.
    ///   - interfaces: the host's interface addresses.
    /// - Returns: at most ``NearbyConnectionData/maxAddresses`` addresses, loopback last.
    static func nearbyAddresses(listeningOn bound: SocketAddress?, interfaces: [SocketAddress?]) -> [String] {
        guard let bound, let boundIP = NearbyConnectionData.pack(bound.ipAddress ?? "") else { return [] }
        guard boundIP.allSatisfy({ $0 == 0 }) else {
            // A specific address: that one, unless it has a scope.
            return isLinkLocalV6(boundIP) ? [] : [bound.ipAddress ?? ""]
        }
        let takesIPv6 = boundIP.count == 16
        var v4: [String] = []
        var v6: [String] = []
        for case let address? in interfaces {
            guard let text = address.ipAddress, let bytes = NearbyConnectionData.pack(text),
                  !isLoopback(bytes), !isLinkLocalV6(bytes), !bytes.allSatisfy({ $0 == 0 }) else { continue }
            if bytes.count == 4 {
                if !v4.contains(text) { v4.append(text) }
            } else if takesIPv6, !(bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff) {
                if !v6.contains(text) { v6.append(text) }
            }
        }
        return Array((v4 + v6).prefix(NearbyConnectionData.maxAddresses - 1)) + ["127.0.0.1"]
    }

    private static func isLoopback(_ bytes: [UInt8]) -> Bool {
        bytes.count == 4 ? bytes[0] == 127 : bytes == [UInt8](repeating: 0, count: 15) + [1]
    }

    private static func isLinkLocalV6(_ bytes: [UInt8]) -> Bool {
        bytes.count == 16 && bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80
    }
}
