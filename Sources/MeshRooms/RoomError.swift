/// Why a room name, password or room line was refused (PROTOCOL.md §15).
///
/// The message names what was wrong; it never carries key material, a password or plaintext.
public struct RoomError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, for logs and people.
    public let message: String

    /// Creates an error.
    /// - Parameter message: what was wrong.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
