/// An error building an identifier from outside text or bytes.
///
/// Each error has a ``code`` for programs and a ``message`` for people that names what was wrong
/// and the value, e.g. "node id of 15 bytes; expected 16". Two errors are equal when their codes
/// are equal. Callers in other layers wrap it in their own error (`WireError`, `SessionError`, …)
/// where they need to. This type is thread-safe.
public struct CoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of error this is.
    public enum Code: Hashable, Sendable {
        /// A node id that is not 16 bytes / 32 hex digits (PROTOCOL.md §2.2).
        case malformedNodeID
        /// A display name that is empty or longer than 63 bytes of UTF-8 (PROTOCOL.md §2.3).
        case invalidDisplayName
    }

    /// What kind of error this is.
    public let code: Code
    /// A sentence for people.
    public let message: String

    /// The message.
    public var description: String { message }

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Equality compares codes only.
    public static func == (lhs: CoreError, rhs: CoreError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    @inline(never)
    static func malformedNodeID(_ why: String) -> CoreError { CoreError(.malformedNodeID, why) }
    @inline(never)
    static func invalidDisplayName(_ why: String) -> CoreError { CoreError(.invalidDisplayName, why) }
}
