import MeshLink

/// The version of meshchat, in one place: `meshchat --version`, every command's help, and
/// `scripts/install`'s man page read it from here.
public enum MeshChatVersion {
    /// The release: `MAJOR.MINOR.PATCH` (the minor number counts development sessions until 1.0).
    public static let release = "0.17.0"
    /// The mesh protocol version this build speaks (PROTOCOL.md §1, §4.2): the handshake's own
    /// constant, so the version string cannot disagree with the wire.
    public static let protocolVersion = HandshakeStateMachine.protocolVersion
    /// The version: the release with the protocol's version after it, `0.17.0 (protocol 8)`.
    public static let current = "\(release) (protocol \(protocolVersion))"
}
