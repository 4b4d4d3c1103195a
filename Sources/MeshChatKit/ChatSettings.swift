import Logging
import Places

/// The settings of a chat node as one source gives them: the command line, or a configuration
/// file (``ConfigFile``). Every setting is `nil` when that source leaves it out, so sources can be
/// layered with ``overriding(_:)``: the command line over the file, the file over the defaults.
///
/// Values are already validated by whoever made the value (``ConfigFile/parse(_:file:home:)``
/// checks every key; the executable checks its flags).
public struct ChatSettings: Sendable, Hashable {
    /// The display name (1–63 bytes of UTF-8).
    public var name: String?
    /// The DNS-SD service type; only peers with the same one connect.
    public var service: String?
    /// Place data files to load (absolute paths once read from a file).
    public var places: [String]?
    /// The default location for `/here`, `/near`, `/map` and pin distances while none was set
    /// with `/here` (a location set with `/here` is remembered in the store and wins).
    public var location: Coordinate?
    /// The TCP and UDP port, 0 for a free one.
    public var port: Int?
    /// Where the key file, the message database and the input history live.
    public var dataDirectory: String?
    /// Hops a message may travel, 1–32.
    public var hopLimit: Int?
    /// The stderr log level.
    public var logLevel: Logger.Level?
    /// Peers to connect to at start, as `HOST:PORT` or connection codes (`meshchat:…`).
    public var connect: [String]?
    /// Whether to announce and browse through avahi-daemon.
    public var discovery: Bool?
    /// Invitations by hand (`/invite`, `/accept`, `/decline`) instead of automatically.
    public var manual: Bool?
    /// Pairs announced to browsing peers (discoveryInfo).
    public var info: [String: String]?
    /// Where received files go (absolute once read from a file or the command line).
    public var downloads: String?
    /// The largest file accepted from a peer, in bytes (1 to 16 GiB).
    public var maxFileSize: UInt64?
    /// Whether a mention or a private line rings the terminal's bell (default: yes).
    public var bell: Bool?
    /// Words besides my name that mention me (``Attention``).
    public var mentions: [String]?
    /// How peers coming and going are shown in text (default: a burst summarised as one line).
    public var presence: PresenceMode?

    /// Creates settings with nothing set.
    public init() {}

    /// These settings, with every one left out here taken from `lower`.
    ///
    /// A list (`places`, `connect`, `info`) given here replaces the lower one whole; lists are
    /// not merged, so the command line can say exactly which files to load.
    /// - Parameter lower: the source these settings override (a configuration file).
    /// - Returns: the layered settings.
    public func overriding(_ lower: ChatSettings) -> ChatSettings {
        var merged = self
        merged.name = name ?? lower.name
        merged.service = service ?? lower.service
        merged.places = places ?? lower.places
        merged.location = location ?? lower.location
        merged.port = port ?? lower.port
        merged.dataDirectory = dataDirectory ?? lower.dataDirectory
        merged.hopLimit = hopLimit ?? lower.hopLimit
        merged.logLevel = logLevel ?? lower.logLevel
        merged.connect = connect ?? lower.connect
        merged.discovery = discovery ?? lower.discovery
        merged.manual = manual ?? lower.manual
        merged.info = info ?? lower.info
        merged.downloads = downloads ?? lower.downloads
        merged.maxFileSize = maxFileSize ?? lower.maxFileSize
        merged.bell = bell ?? lower.bell
        merged.mentions = mentions ?? lower.mentions
        merged.presence = presence ?? lower.presence
        return merged
    }
}
