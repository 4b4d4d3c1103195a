import Foundation
import MeshSession

/// A node's away text (`/away`), carried as the chat channel's advert attachment
/// (PROTOCOL.md §17.7): the text's UTF-8 bytes, 1 to ``maxBytes``, no control characters.
///
/// Pure: ``attachment(_:)`` checks and encodes this node's text, ``text(fromAttachment:)``
/// checks what a peer's advert carries and returns `nil` for anything that breaks a rule (the
/// receiver binds the same limits as the sender).
public enum AwayText {
    /// The longest away text, in bytes of UTF-8.
    public static let maxBytes = 256

    /// Why a text cannot be an away text.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The sentence to show.
        public let description: String
    }

    /// The attachment for an away text.
    /// - Parameter text: the text, or `nil` (or only spaces) to clear it.
    /// - Returns: the attachment, `nil` to remove it.
    /// - Throws: ``Problem`` when it is longer than ``maxBytes`` or holds control characters.
    public static func attachment(_ text: String?) throws(Problem) -> Data? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        guard text.utf8.count <= maxBytes else {
            throw Problem(description: "the away text is \(text.utf8.count) bytes, at most \(maxBytes)")
        }
        guard !hasControlCharacters(text) else { throw Problem(description: "the away text cannot contain control characters or line breaks") }
        return Data(text.utf8)
    }

    /// The away text a peer's attachment carries.
    /// - Parameter data: the chat channel's attachment from the peer's advert (untrusted).
    /// - Returns: the text, or `nil` when there is none or it breaks a rule (empty, longer than
    ///   ``maxBytes``, not UTF-8, control characters).
    public static func text(fromAttachment data: Data?) -> String? {
        guard let data, !data.isEmpty, data.count <= maxBytes,
              let text = String(validating: data, as: UTF8.self), !hasControlCharacters(text) else { return nil }
        return text
    }

    private static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.value == 0x2028 || $0.value == 0x2029 }
    }
}

extension Messenger {
    /// Sets this node's away text, or clears it, in the chat channel's attachment: every node
    /// learns it from this node's next signed advert (PROTOCOL.md §17.7).
    /// - Parameter text: the text, or `nil` to clear it.
    /// - Throws: ``AwayText/Problem`` for a text over the limits; ``MeshSession/SessionError`` when
    ///   the channel is closed.
    public nonisolated func setAway(_ text: String?) async throws {
        try await channel.setAttachment(try AwayText.attachment(text))
    }

    /// A node's away text, as its latest verified advert carries it (this node's own too).
    /// - Parameter peer: the node.
    /// - Returns: the text, or `nil` when it set none or its attachment breaks a rule.
    public nonisolated func away(of peer: PeerID) -> String? {
        AwayText.text(fromAttachment: channel.attachment(of: peer))
    }
}
