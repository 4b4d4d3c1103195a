/// The version of meshchat, in one place: `meshchat --version`, every command's help, and
/// `scripts/install`'s man page read it from here.
public enum MeshChatVersion {
    /// The version: `MAJOR.MINOR.PATCH` (the minor number counts development sessions until 1.0),
    /// with the mesh protocol's version after it (PROTOCOL.md §1).
    public static let current = "0.11.0 (protocol 3)"
}
