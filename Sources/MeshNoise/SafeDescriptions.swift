// Descriptions and mirrors that show protocol progress but never keys, chaining keys or
// plaintext: `print`, `dump`, string interpolation and debuggers all go through these.

extension NoiseHandshake: CustomStringConvertible, CustomReflectable {
    /// The protocol, role and progress; never key material.
    public var description: String {
        let role = isInitiator ? "initiator" : "responder"
        let total = protocolName.pattern.messages.count
        return "NoiseHandshake(\(protocolName), \(role), message \(messageIndex) of \(total))"
    }

    /// A mirror without key material, so `dump` and debuggers cannot print keys.
    public var customMirror: Mirror {
        Mirror(self, children: ["protocolName": protocolName.rawValue, "isInitiator": isInitiator, "messageIndex": messageIndex])
    }
}

extension NoiseCipherState: CustomStringConvertible, CustomReflectable {
    /// The nonce only; never the key.
    public var description: String { "NoiseCipherState(nonce: \(nonce))" }

    /// A mirror without key material, so `dump` and debuggers cannot print the key.
    public var customMirror: Mirror { Mirror(self, children: ["nonce": nonce]) }
}
