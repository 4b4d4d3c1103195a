import MeshChatKit
import Testing

/// ``MeshChatVersion``: `meshchat --version` names the protocol the handshake speaks.
@Suite("meshchat version")
struct MeshChatVersionTests {
    @Test("the version string is the release and the handshake's protocol version (8 since resource windows of 256 chunks), not a copy of it")
    func protocolVersion() {
        #expect(MeshChatVersion.protocolVersion == 8)
        #expect(MeshChatVersion.current == "\(MeshChatVersion.release) (protocol 8)")
        #expect(!MeshChatVersion.current.contains("protocol 3"))
    }
}
