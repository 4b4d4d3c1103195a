/// The id of an application channel on the wire (PROTOCOL.md §13.12).
///
/// The id space is 32 bits, and 0 is not an id:
/// - 1 – 1,023: the library's own protocols and the meshchat project's applications
///   (the constants below, listed in PROTOCOL.md §13.12);
/// - 1,024 – 65,535: reserved; a session refuses to register them;
/// - 65,536 – 4,294,967,295 (``thirdPartyRange``): for any other application. Pick one at random
///   once, and keep it: two applications that pick the same id read each other's messages as their
///   own, so treat every payload as untrusted input anyway.
public struct ChannelID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The id as it travels on the wire.
    public let rawValue: UInt32

    /// Creates an id from its wire value.
    /// - Parameter rawValue: 1 – 4,294,967,295.
    /// - Returns: `nil` for 0, which is not an id.
    public init?(rawValue: UInt32) {
        guard rawValue != 0 else { return nil }
        self.rawValue = rawValue
    }

    private init(reserved rawValue: UInt32) { self.rawValue = rawValue }

    /// The ids of applications outside this project: 65,536 and up.
    public static let thirdPartyRange: ClosedRange<UInt32> = 65_536...UInt32.max
    /// The ids of the library and the meshchat project: 1 – 1,023.
    public static let projectRange: ClosedRange<UInt32> = 1...1_023

    /// Chat lines, private lines and their receipts (the meshchat chat application).
    public static let chat = ChannelID(reserved: 1)
    /// Lines to rooms (the meshchat rooms application).
    public static let rooms = ChannelID(reserved: 2)
    /// Place lookups, answers and pins (the meshchat places application).
    public static let places = ChannelID(reserved: 3)
    /// File offers and transfers (the meshchat files application).
    public static let files = ChannelID(reserved: 4)
    /// The library's byte streams (``Session`` streams).
    public static let streams = ChannelID(reserved: 16)
    /// The library's resources (``Session`` resources).
    public static let resources = ChannelID(reserved: 17)

    /// Whether a session registers this id: the project range and the third-party range.
    public var isRegistrable: Bool { Self.projectRange.contains(rawValue) || Self.thirdPartyRange.contains(rawValue) }

    /// Orders by wire value.
    public static func < (lhs: ChannelID, rhs: ChannelID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `channel N`.
    public var description: String { "channel \(rawValue)" }
}
