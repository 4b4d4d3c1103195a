import Foundation
import MeshSession

/// What meshboard sends on its channel: a kind byte, then UTF-8 text.
///
/// Every payload comes from another node, which may send anything: ``decode(_:)`` checks the kind,
/// the size and the encoding and returns `nil` for anything else.
enum BoardMessage: Equatable {
    /// A post to everyone (broadcast).
    case post(String)
    /// A note to one node (sealed).
    case note(String)

    /// meshboard's channel: an id from the third-party range, picked at random once.
    static let channel = ChannelID(rawValue: 0x5EED_B0A2)!
    /// The longest text, in bytes.
    static let maxTextBytes = 1_000
    /// The longest status (the channel attachment), in bytes.
    static let maxStatusBytes = 200

    /// The channel's limits: small messages, a modest rate, and a full queue drops rather than
    /// stalling the links (a bulletin board can lose a post; chat cannot).
    static var limits: ChannelLimits {
        var limits = ChannelLimits()
        limits.maxMessageSize = 1 + maxTextBytes
        limits.maxBroadcastSize = 1 + maxTextBytes
        limits.messagesPerSecond = 20
        limits.burst = 40
        limits.overflow = .drop
        limits.maxAttachmentSize = maxStatusBytes
        return limits
    }

    /// The payload.
    var encoded: Data {
        switch self {
        case .post(let text): Data([1]) + Data(text.utf8)
        case .note(let text): Data([2]) + Data(text.utf8)
        }
    }

    /// Decodes a payload, or `nil` when it is not a valid meshboard message.
    static func decode(_ payload: Data) -> BoardMessage? {
        guard let kind = payload.first, payload.count <= 1 + maxTextBytes,
              let text = String(data: payload.dropFirst(), encoding: .utf8) else { return nil }
        switch kind {
        case 1: return .post(text)
        case 2: return .note(text)
        default: return nil
        }
    }

    /// A status from an attachment, or `nil` when it is not valid UTF-8 or too long.
    static func status(_ attachment: Data?) -> String? {
        guard let attachment, attachment.count <= maxStatusBytes else { return nil }
        return String(data: attachment, encoding: .utf8)
    }
}
