/// A places message, command argument or data-set advert that breaks a rule of PROTOCOL.md §14.
///
/// The message names the field and the rule, e.g. "pin label is 80 bytes, at most 64".
public struct PlacesInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A sentence for people.
    public let message: String

    /// Creates an error.
    /// - Parameter message: what was wrong.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
