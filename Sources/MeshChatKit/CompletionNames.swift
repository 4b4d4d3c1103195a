import MeshSession

/// The peer names Tab completes, learnt from what the chat front shows (pure).
///
/// Every output that names a peer (a connection, a message, a discovery, `/peers`…) adds or
/// renames it; my own id, learnt from ``ChatOutput/ready(id:name:port:)``, is left out. A name
/// with whitespace or a control character cannot be typed as one word, so its peer completes to
/// its 8-digit id prefix, which `/msg` and `/route` accept as well; so does a key claiming a name
/// another key holds (PROTOCOL.md §20.3, seen in ``PeerMarks/book`` while the output is shown), so
/// that completion never offers the name to an impostor.
public struct CompletionNames: Sendable, Hashable {
    /// The most peers remembered; the earliest learnt are forgotten first.
    public static let limit = 1_000

    private var names: [String: String] = [:]
    private var order: [String] = []
    private var myID: String?

    /// Creates an empty set.
    public init() {}

    /// The words to complete, sorted.
    public var words: [String] {
        names.map { id, name in
            name.contains(where: { $0.isWhitespace || $0.unicodeScalars.contains { !KeyDecoder.isPrintable($0) } })
                ? String(id.prefix(8)) : name
        }.sorted()
    }

    /// Learns the peers an output names.
    /// - Parameter output: an output of the chat front.
    /// - Returns: whether the words changed.
    @discardableResult
    public mutating func learn(from output: ChatOutput) -> Bool {
        let before = words
        switch output {
        case .ready(let id, _, _):
            myID = id
            names[id] = nil
        case .peer(let peer, _, _, _), .found(let peer, _, _, _), .reachability(let peer, _, _),
             .invitation(let peer, _, _, _), .route(let peer, _):
            note(id: peer.id.hex, name: peer.displayName)
        case .message(_, let from, _, _, _, _, _, _, _):
            note(id: from.id.hex, name: from.displayName)
        case .sent(_, _, let to, _, _, _, _):
            for peer in to { note(id: peer.id.hex, name: peer.displayName) }
        case .peers(let rows):
            for row in rows { note(id: row.id, name: row.name) }
        default:
            break
        }
        return words != before
    }

    private mutating func note(id: String, name: String) {
        guard id != myID, !name.isEmpty else { return }
        if names[id] == nil { order.append(id) }
        var name = name
        // A claimant completes to its id prefix, as a name that cannot be typed does.
        if let node = try? NodeID(hex: id), case .newKey = PeerMarks.book?.standing(of: node, name: name) { name = "\n" }
        names[id] = name
        while order.count > Self.limit { names[order.removeFirst()] = nil }
    }
}
