import Logging
import MeshTransport
import MeshWire
import NIOConcurrencyHelpers
import NIOCore

/// The addresses a session keeps links to, guarded by the session's lock.
struct RedialTable {
    struct Entry {
        /// Tells this address's task apart from an earlier one for the same address.
        let token: UInt64
        /// The peer met at the address, once a handshake completed there.
        var peer: PeerID?
        /// Completed to end the current wait early (stop, or the peer's link went down).
        var wake: EventLoopPromise<Void>?
        /// Kept with nearby connection data: its addresses are dialled and its identity checked
        /// (PROTOCOL.md §4.10) instead of the address alone.
        var nearby: NearbyConnectionData?
    }

    var entries: [String: Entry] = [:]
    var nextToken: UInt64 = 0

    /// Takes an entry's wake promise out, to complete it outside the lock (once).
    mutating func takeWake(_ address: String) -> EventLoopPromise<Void>? {
        defer { entries[address]?.wake = nil }
        return entries[address]?.wake
    }
}

extension Session {
    // MARK: Links kept to addresses

    /// Opens a link to a peer at an address and, with `redial`, keeps it: whenever the link is
    /// down (the peer restarted, the network was cut) the address is dialled again, after
    /// 1 s doubling up to 30 s with jitter (``RedialBackoff``), until ``stopRedialing(host:port:)``
    /// or ``disconnect()``. While the peer met there is connected through another link (it
    /// dialled this node), nothing is dialled.
    ///
    /// Outcomes are events: ``SessionEvent/peerChanged(_:_:)`` with ``PeerState/connected``, or
    /// ``SessionEvent/connectFailed(address:reason:)``, which a redialled address reports once per
    /// run of failures (the first), not once per try. Asking again for an address already kept
    /// dials it now.
    /// - Parameters:
    ///   - host: a host name or an IPv4/IPv6 address.
    ///   - port: the peer's TCP port.
    ///   - redial: whether to keep the link (otherwise this is ``connect(host:port:)``).
    public func connect(host: String, port: Int, redial: Bool) {
        guard redial else { return connect(host: host, port: port) }
        keep(host: host, port: port, nearby: nil)
    }

    /// Keeps a link to an address, or to nearby connection data under its first address.
    func keep(host: String, port: Int, nearby: NearbyConnectionData?) {
        let address = Self.format(host: host, port: port)
        let token = redials.withLockedValue { table -> UInt64? in
            guard table.entries[address] == nil else { return nil }
            table.nextToken += 1
            table.entries[address] = RedialTable.Entry(token: table.nextToken, nearby: nearby)
            return table.nextToken
        }
        guard let token else {
            redials.withLockedValue { $0.takeWake(address) }?.succeed()
            return
        }
        commandSink.yield(.redial(host: host, port: port, token: token))
    }

    /// Stops keeping a link to an address, and closes the link to the peer met there.
    /// - Parameters:
    ///   - host: as given to ``connect(host:port:redial:)``.
    ///   - port: as given to ``connect(host:port:redial:)``.
    /// - Returns: whether the address was being kept.
    @discardableResult
    public func stopRedialing(host: String, port: Int) -> Bool {
        let address = Self.format(host: host, port: port)
        let (entry, wake) = redials.withLockedValue { table in
            let wake = table.takeWake(address)
            return (table.entries.removeValue(forKey: address), wake)
        }
        wake?.succeed()
        guard let entry else { return false }
        if let peer = entry.peer { disconnect(peer) }
        return true
    }

    /// The addresses kept with ``connect(host:port:redial:)``, as `HOST:PORT` (`[v6]:PORT`), sorted.
    public var redialedAddresses: [String] {
        redials.withLockedValue { $0.entries.keys.sorted() }
    }

    /// An address as sessions name it in events and ``redialedAddresses``.
    /// - Parameters:
    ///   - host: a host name or an IPv4/IPv6 address, without brackets.
    ///   - port: the port.
    /// - Returns: `HOST:PORT`, or `[IPV6]:PORT`.
    public static func format(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Dials an address until it is no longer kept (the task behind ``connect(host:port:redial:)``).
    func redial(host: String, port: Int, token: UInt64, transport: TCPTransport) async {
        let address = Self.format(host: host, port: port)
        var backoff = RedialBackoff()
        var generator = SystemRandomNumberGenerator()
        var quiet = false
        while let entry = redials.withLockedValue({ $0.entries[address] }), entry.token == token {
            if let peer = entry.peer, registry.withLockedValue({ $0.entries[peer.id] != nil }) {
                // Connected through another link: wait for it to go down (its end wakes this).
                await pause(address, token: token, for: RedialBackoff.cap)
                continue
            }
            let started = clock.now
            let peer = if let nearby = entry.nearby {
                await dial(nearby, transport: transport, quiet: quiet, kept: (address, token))
            } else {
                await dial(host: host, port: port, transport: transport, quiet: quiet, redial: token)
            }
            if peer != nil {
                backoff.linkEnded(lasted: clock.now - started)
                quiet = false
            } else {
                backoff.dialFailed()
                quiet = true
            }
            let delay = backoff.delay(using: &generator)
            logger.debug("redialing", metadata: ["link.remote": "\(address)", "redial.failures": "\(backoff.failures)",
                                                 "redial.delay": "\(delay)"])
            await pause(address, token: token, for: delay)
        }
    }

    /// A link dialled for a kept address completed its handshake: remember the peer met there
    /// (so that ``stopRedialing(host:port:)`` can close its link).
    /// - Returns: whether the address is still kept (otherwise the link is to be closed).
    func keptLinkEstablished(_ address: String, token: UInt64, peer: PeerID) -> Bool {
        redials.withLockedValue { table in
            guard table.entries[address]?.token == token else { return false }
            table.entries[address]?.peer = peer
            return true
        }
    }

    /// Waits `delay`, or less when the address's wait is ended early.
    private func pause(_ address: String, token: UInt64, for delay: Duration) async {
        let loop = timerLoop
        let promise = loop.makePromise(of: Void.self)
        let installed = redials.withLockedValue { table -> Bool in
            guard table.entries[address]?.token == token else { return false }
            table.entries[address]?.wake = promise
            return true
        }
        guard installed else {
            promise.succeed()
            return
        }
        let timer = loop.scheduleTask(in: .nanoseconds(Self.nanoseconds(delay))) { [redials] in
            redials.withLockedValue { $0.entries[address]?.token == token ? $0.takeWake(address) : nil }?.succeed()
        }
        try? await promise.futureResult.get()
        timer.cancel()
    }

    /// Ends the waits of addresses whose peer's link went down: they dial at once.
    func wakeRedials(for peer: NodeID) {
        let wakes = redials.withLockedValue { table in
            Array(table.entries.filter { $0.value.peer?.id == peer }.keys).compactMap { table.takeWake($0) }
        }
        for wake in wakes { wake.succeed() }
    }

    /// Forgets every kept address and ends their waits (the session stops).
    func stopAllRedials() {
        let wakes = redials.withLockedValue { table -> [EventLoopPromise<Void>] in
            let wakes = Array(table.entries.keys).compactMap { table.takeWake($0) }
            table.entries = [:]
            return wakes
        }
        for wake in wakes { wake.succeed() }
    }
}
