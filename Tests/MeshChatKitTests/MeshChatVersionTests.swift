import MeshChatKit
import Testing

/// ``MeshChatVersion``: `meshchat --version` names the protocol the handshake speaks.
@Suite("meshchat version")
struct MeshChatVersionTests {
    @Test("the version string is the release and the handshake's protocol version (7 since direct channel messages), not a copy of it")
    func protocolVersion() {
        #expect(MeshChatVersion.protocolVersion == 7)
        #expect(MeshChatVersion.current == "\(MeshChatVersion.release) (protocol 7)")
        #expect(!MeshChatVersion.current.contains("protocol 3"))
    }
}
