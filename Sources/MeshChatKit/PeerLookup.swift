import Synchronization
import MeshSession

/// Finds the peer a user means by a name or an id prefix (`/msg`, `/route`, `/invite`).
public enum PeerLookup {
    /// The outcome of a lookup.
    public enum Outcome: Sendable, Hashable {
        /// Exactly one peer.
        case success(PeerID)
        /// None or several: the sentence to show (several are listed with their id prefixes).
        case failure(String)
    }

    /// Finds one peer by exact display name, then by case-insensitive display name, then by id prefix.
    /// - Parameters:
    ///   - name: what the user typed (without `@`).
    ///   - peers: the candidates.
    ///   - noun: what the candidates are, for the error ("reachable peer").
    /// - Returns: the peer, or why none could be chosen.
    public static func match(_ name: String, in peers: [PeerID], noun: String) -> Outcome {
        let candidates = candidates(name, in: peers)
        switch candidates.count {
        case 1: return .success(candidates[0])
        case 0: return .failure("no \(noun) is called \"\(name)\" (see /peers)")
        default:
            return .failure("\"\(name)\" matches \(candidates.count) peers; use an id prefix: "
                            + candidates.map { "\($0.displayName) \($0.id.shortHex)" }.joined(separator: ", "))
        }
    }
}

extension PeerLookup {
    /// The peers `name` may mean, by the rules of ``match(_:in:noun:)``: one is a match,
    /// several are ambiguous.
    /// - Parameters:
    ///   - name: what the user typed (without `@`).
    ///   - peers: the candidates.
    /// - Returns: the peers with that exact display name, else that name in any case, else
    ///   (for two or more hex digits) whose id starts with it.
    public static func candidates(_ name: String, in peers: [PeerID]) -> [PeerID] {
        var candidates = peers.filter { $0.displayName == name }
        if candidates.isEmpty { candidates = peers.filter { $0.displayName.lowercased() == name.lowercased() } }
        if candidates.isEmpty, name.count >= 2, name.allSatisfy(\.isHexDigit) {
            candidates = peers.filter { $0.id.hex.hasPrefix(name.lowercased()) }
        }
        return candidates
    }
}

/// The peers the chat front has seen since it started (connected, reachable or heard from), so a
/// line can be addressed by name to a peer that is out of reach now. Thread-safe.
final class PeerBook: Sendable {
    private let peers = Mutex<[NodeID: PeerID]>([:])

    /// Remembers a peer (its latest name).
    func note(_ peer: PeerID) {
        peers.withLock { $0[peer.id] = peer }
    }

    /// Every peer seen.
    var all: [PeerID] { peers.withLock { Array($0.values) } }
}
