/// One token of a Noise handshake pattern (Noise revision 34, §7.1).
///
/// A message pattern is a sequence of tokens processed in order by both the writer and the
/// reader. DH tokens name the initiator's key first: `es` is DH(initiator ephemeral,
/// responder static) whichever side processes it.
public enum NoiseToken: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The writer's ephemeral public key, sent in clear.
    case e
    /// The writer's static public key, encrypted once a key is established.
    case s
    /// DH(initiator ephemeral, responder ephemeral).
    case ee
    /// DH(initiator ephemeral, responder static).
    case es
    /// DH(initiator static, responder ephemeral).
    case se
    /// DH(initiator static, responder static).
    case ss
    /// Mixes the next preshared key into the state (§9).
    case psk

    /// The token as written in the specification (`e`, `es`, `psk`, ...).
    public var description: String { rawValue }
}

/// A Noise handshake pattern: pre-messages and message patterns (Noise revision 34, §7).
///
/// The table ``all`` holds the 15 fundamental patterns (§7.4, §7.5) and the 23 deferred patterns
/// (§18.2). Apply psk modifiers (§9) with ``applyingPSKModifiers(_:)``; ``NoiseProtocolName``
/// does this for names like `XXpsk3`.
///
/// Messages alternate: index 0 is written by the initiator, index 1 by the responder, and so on.
/// A pattern with a single message is one-way (§7.4): only the initiator ever sends, also after
/// the handshake.
public struct NoiseHandshakePattern: Hashable, Sendable, CustomStringConvertible {
    /// The pattern name including modifiers, e.g. `XX` or `XXpsk3`.
    public let name: String
    /// Keys the responder knows about the initiator before the handshake (`-> s ...`).
    public let initiatorPreMessage: [NoiseToken]
    /// Keys the initiator knows about the responder before the handshake (`<- s ...`).
    public let responderPreMessage: [NoiseToken]
    /// The handshake messages; even indices are written by the initiator, odd by the responder.
    public let messages: [[NoiseToken]]

    /// Creates a pattern from its parts.
    ///
    /// - Parameters:
    ///   - name: The pattern name, e.g. `XX`.
    ///   - initiatorPreMessage: Tokens of the initiator's pre-message (only `s` is supported by
    ///     ``NoiseHandshake``).
    ///   - responderPreMessage: Tokens of the responder's pre-message.
    ///   - messages: The message patterns, starting with the initiator's first message.
    public init(
        name: String,
        initiatorPreMessage: [NoiseToken] = [],
        responderPreMessage: [NoiseToken] = [],
        messages: [[NoiseToken]]
    ) {
        self.name = name
        self.initiatorPreMessage = initiatorPreMessage
        self.responderPreMessage = responderPreMessage
        self.messages = messages
    }

    /// Whether only the initiator sends (the `N`, `K` and `X` patterns, §7.4).
    public var isOneWay: Bool { messages.count == 1 }

    /// The number of `psk` tokens, i.e. how many preshared keys a handshake needs.
    public var presharedKeyCount: Int { messages.reduce(0) { $0 + $1.lazy.filter { $0 == .psk }.count } }

    /// The pattern in the notation of the specification, e.g. `<- s ... -> e, es`.
    public var description: String {
        var lines: [String] = []
        if !initiatorPreMessage.isEmpty { lines.append("-> " + initiatorPreMessage.map(\.rawValue).joined(separator: ", ")) }
        if !responderPreMessage.isEmpty { lines.append("<- " + responderPreMessage.map(\.rawValue).joined(separator: ", ")) }
        if !lines.isEmpty { lines.append("...") }
        for (index, message) in messages.enumerated() {
            lines.append((index % 2 == 0 ? "-> " : "<- ") + message.map(\.rawValue).joined(separator: ", "))
        }
        return "\(name): " + lines.joined(separator: " ")
    }

    /// Whether the given side must own a static key pair for this pattern.
    ///
    /// - Parameter initiator: The side: `true` for the initiator.
    /// - Returns: `true` when that side's static key appears in its pre-message or is sent by it,
    ///   or takes part in a DH (`se`/`ss` for the initiator, `es`/`ss` for the responder).
    public func needsLocalStatic(initiator: Bool) -> Bool {
        let preMessage = initiator ? initiatorPreMessage : responderPreMessage
        if preMessage.contains(.s) { return true }
        let dh: Set<NoiseToken> = initiator ? [.se, .ss] : [.es, .ss]
        if messages.contains(where: { $0.contains(where: dh.contains) }) { return true }
        for (index, message) in messages.enumerated() where (index % 2 == 0) == initiator {
            if message.contains(.s) { return true }
        }
        return false
    }

    /// Whether the given side must know the peer's static public key before the handshake.
    ///
    /// - Parameter initiator: The side: `true` for the initiator.
    /// - Returns: `true` when the peer's pre-message contains `s`.
    public func needsRemoteStaticBeforehand(initiator: Bool) -> Bool {
        (initiator ? responderPreMessage : initiatorPreMessage).contains(.s)
    }

    /// Returns this pattern with psk modifiers applied (Noise revision 34, §9.2).
    ///
    /// `psk0` puts a `psk` token at the start of the first message; `pskN` (N ≥ 1) appends one at
    /// the end of message N-1. Modifiers are applied in order and appended to the name, e.g.
    /// `NN` with `[0, 2]` becomes `NNpsk0+psk2`.
    ///
    /// - Parameter positions: The psk modifier numbers, in the order they appear in the name.
    /// - Returns: The modified pattern.
    /// - Throws: ``NoiseError/Code/unsupportedProtocol`` when a position exceeds the number of
    ///   messages.
    public func applyingPSKModifiers(_ positions: [Int]) throws(NoiseError) -> NoiseHandshakePattern {
        var messages = self.messages
        for position in positions {
            guard position >= 0, position <= messages.count else {
                throw .unsupportedProtocol(
                    name, "psk\(position) needs at least \(position) messages, the pattern has \(messages.count)"
                )
            }
            if position == 0 {
                messages[0].insert(.psk, at: 0)
            } else {
                messages[position - 1].append(.psk)
            }
        }
        let suffix = positions.map { "psk\($0)" }.joined(separator: "+")
        return NoiseHandshakePattern(
            name: name + suffix,
            initiatorPreMessage: initiatorPreMessage,
            responderPreMessage: responderPreMessage,
            messages: messages
        )
    }

    /// Looks up a pattern by name in ``all``.
    ///
    /// - Parameter name: A base pattern name without modifiers, e.g. `XX` or `X1K1`.
    /// - Returns: The pattern, or `nil` when the table has no such pattern.
    public static func named(_ name: String) -> NoiseHandshakePattern? { table[name] }

    /// Every supported base pattern: the fundamental (§7.4, §7.5) and deferred (§18.2) patterns.
    public static let all: [NoiseHandshakePattern] = fundamental + deferred

    private static let table: [String: NoiseHandshakePattern] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.name, $0) }
    )
}
