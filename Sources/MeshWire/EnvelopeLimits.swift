import struct Foundation.Data

extension Meshchat_V1_Envelope {
    /// The most bytes each body may take on the wire, checked before the envelope is decoded
    /// (PROTOCOL.md §6.1, §10): decoding costs time in proportion to the size (a 16 MiB chat line's
    /// UTF-8 validation alone held a debug build's event loop for seconds), so a receiver refuses an
    /// oversized body from its length prefix. `data` has no limit of its own (the message's 16 MiB);
    /// field numbers not listed (a newer peer's bodies) are not limited here.
    public static let maxBodyBytes: [Int: Int] = [
        1: WireLimits.maxChatTextBytes + 128,      // chat: the text, the 16-byte id, the time
        3: 32,                                     // ping
        4: 32,                                     // pong
        5: maxGoodbyeBytes,                        // goodbye: a code and a reason
        6: 32,                                     // invitation_accepted
        7: WireLimits.maxSealedSize + 256,         // routed: one sealed or signed payload and its header
        8: WireLimits.maxRelayedPayload + 32,      // direct: a channel payload, its channel and time (version 7)
    ]

    private static let bodyNames = [1: "chat", 3: "ping", 4: "pong", 5: "goodbye", 6: "invitation_accepted", 7: "routed", 8: "direct"]

    /// The largest goodbye body (its reason is shown truncated to 256 bytes).
    public static let maxGoodbyeBytes = 4096

    /// Why a serialized envelope breaks a receive limit, judged from its fields' length prefixes
    /// without decoding it; `nil` when it does not (or is malformed: decoding reports that).
    /// - Parameter message: a reassembled message.
    /// - Returns: a description naming the body, its size and the limit.
    public static func receiveLimitViolation(in message: Data) -> String? {
        var sizes: [Int: Int] = [:]
        var index = message.startIndex
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < message.endIndex, shift < 64 {
                let byte = message[index]
                index += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        while index < message.endIndex {
            guard let tag = varint() else { return nil }
            let field = Int(truncatingIfNeeded: tag >> 3)
            switch tag & 7 {
            case 0: guard varint() != nil else { return nil }
            case 1: index += 8
            case 5: index += 4
            case 2:
                guard let length = varint(), length <= UInt64(message.endIndex - index) else { return nil }
                let size = Int(length)
                index += size
                guard let limit = maxBodyBytes[field] else { continue }
                sizes[field, default: 0] += size
                if let total = sizes[field], total > limit {
                    return "a \(bodyNames[field] ?? "field \(field)") body of \(total) bytes (maximum \(limit))"
                }
            default: return nil
            }
        }
        return nil
    }
}
