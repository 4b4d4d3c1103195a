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
    /// A name goes only to its holder in `names` (PROTOCOL.md §20.3): another key claiming it is
    /// reached by its id prefix only.
    /// - Parameters:
    ///   - name: what the user typed (without `@`).
    ///   - peers: the candidates.
    ///   - noun: what the candidates are, for the error ("reachable peer").
    ///   - names: which key holds each name (empty: names are not checked).
    /// - Returns: the peer, or why none could be chosen.
    public static func match(_ name: String, in peers: [PeerID], noun: String, names: NameBook = NameBook()) -> Outcome {
        let candidates = candidates(name, in: peers, names: names)
        switch candidates.count {
        case 1: return .success(candidates[0])
        case 0:
            return .failure(claimantProblem(name, in: peers, noun: noun, names: names) ?? "no \(noun) is called \"\(name)\" (see /peers)")
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
    ///   - names: which key holds each name: a peer whose display name another key holds is no
    ///     candidate by that name (empty: names are not checked).
    /// - Returns: the peers with that exact display name, else that name in any case, else
    ///   (for two or more hex digits) whose id starts with it.
    public static func candidates(_ name: String, in peers: [PeerID], names: NameBook = NameBook()) -> [PeerID] {
        let allPeers = peers
        let peers = peers.filter { !isClaimant($0, names) }
        var candidates = peers.filter { $0.displayName == name }
        if candidates.isEmpty { candidates = peers.filter { $0.displayName.lowercased() == name.lowercased() } }
        if candidates.isEmpty, name.count >= 2, name.allSatisfy(\.isHexDigit) {
            candidates = allPeers.filter { $0.id.hex.hasPrefix(name.lowercased()) }
        }
        return candidates
    }

    /// Why `name` finds nobody when only keys claiming a name another key holds go by it.
    /// - Parameters:
    ///   - name: what the user typed (without `@`).
    ///   - peers: the candidates.
    ///   - noun: what the candidates are ("reachable peer").
    ///   - names: which key holds each name.
    /// - Returns: the sentence, or `nil` when no claimant goes by `name`.
    public static func claimantProblem(_ name: String, in peers: [PeerID], noun: String, names: NameBook) -> String? {
        let claimants = candidates(name, in: peers).filter { isClaimant($0, names) }
        guard let holder = names.holder(of: name), !claimants.isEmpty else { return nil }
        return "\"\(name)\" belongs to the key \(holder.shortHex), which is not among the \(noun)s; "
            + claimants.map { "\($0.displayName) \($0.id.shortHex) is another key claiming the name" }.joined(separator: ", ")
            + " (address it by its id prefix if you mean it)"
    }

    /// Whether `peer` claims a display name another key holds (it is reachable by id prefix only).
    static func isClaimant(_ peer: PeerID, _ names: NameBook) -> Bool {
        if case .newKey = names.standing(of: peer.id, name: peer.displayName) { return true }
        return false
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
