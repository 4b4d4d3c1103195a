import struct Foundation.Data

/// What opening a sealed packet would make this node do before the packet's tag can fail
/// (PROTOCOL.md §13.11, §19.6): read from the packet's visible header and the session it names,
/// without doing any of it, so that a node can charge the work to the neighbour it came from first.
///
/// An estimate from above: a packet that fails earlier (a gap over MAX_SKIP, an unknown session)
/// does less. This type is thread-safe (a value).
public struct RatchetWork: Sendable, Hashable {
    /// Whether it needs Diffie-Hellman: an X3DH agreement (a prekey message) or a turn of the ratchet.
    public var diffieHellman: Bool
    /// Message keys it derives: one chain step each, skipped keys included.
    public var derivedKeys: Int

    /// Creates an estimate.
    /// - Parameters:
    ///   - diffieHellman: whether it needs Diffie-Hellman.
    ///   - derivedKeys: message keys it derives.
    public init(diffieHellman: Bool, derivedKeys: Int) {
        self.diffieHellman = diffieHellman
        self.derivedKeys = derivedKeys
    }

    /// No work: the packet fails before any (malformed, or a session this node does not hold).
    public static let none = RatchetWork(diffieHellman: false, derivedKeys: 0)
    /// What any packet may cost at most with `limits`: Diffie-Hellman and two chains' worth of
    /// skipped keys (for a session this node cannot look at cheaply).
    public static func most(_ limits: RatchetLimits) -> RatchetWork {
        RatchetWork(diffieHellman: true, derivedKeys: 2 * Int(limits.maxSkip) + 1)
    }
}

extension DoubleRatchet {
    /// The work decrypting a message with `header` would take (``RatchetWork``).
    /// - Parameter header: the message's header.
    public func openingWork(_ header: RatchetHeader) -> RatchetWork {
        if skipped[SkippedIndex(ratchetKey: header.ratchetKey, number: header.number)] != nil {
            return RatchetWork(diffieHellman: false, derivedKeys: 0)
        }
        let maxSkip = Int(min(limits.maxSkip, UInt32(RatchetLimits.ceiling)))
        // A gap over MAX_SKIP fails before any key is derived (``skipKeys(until:)``).
        func gap(_ until: UInt32) -> Int { until > receivedCount ? min(Int(until - receivedCount), maxSkip) : 0 }
        guard header.ratchetKey == receivingRatchet else {
            let previous = receivingChain == nil ? 0 : gap(header.previousCount)
            return RatchetWork(diffieHellman: true, derivedKeys: previous + min(Int(header.number), maxSkip) + 1)
        }
        // An old number whose key was not kept fails on the first derivation's tag at most.
        return RatchetWork(diffieHellman: false, derivedKeys: gap(header.number) + 1)
    }
}

extension PairSessions {
    /// The work opening an encoded packet (§19.6) would take: a prekey message needs an agreement;
    /// a session message what its session's ratchet says (``DoubleRatchet/openingWork(_:)``); a
    /// message of a session not held here, a malformed packet or one of an unknown kind none.
    /// - Parameter packet: the packet as it came (`Routed.sealed`).
    public func openingWork(of packet: Data) -> RatchetWork {
        guard let kind = packet.first else { return .none }
        switch kind {
        case RatchetPacket.prekeyKind:
            return RatchetWork(diffieHellman: true, derivedKeys: 1)
        case RatchetPacket.sessionKind:
            guard let (id, header) = RatchetPacket.sessionHeader(of: packet),
                  let entry = entries.first(where: { $0.id == id }) else { return .none }
            return entry.ratchet.openingWork(header)
        default:
            return .none
        }
    }
}
