import MeshSession
import Testing

/// `Session.parseAddress(_:)`: `HOST:PORT` as people write it, and every malformed form refused.
@Suite("Addresses")
struct AddressTests {
    @Test("valid addresses split into host and port",
          arguments: [("127.0.0.1:7000", "127.0.0.1", 7000), ("[::1]:1", "::1", 1), ("[fe80::1%eth0]:65535", "fe80::1%eth0", 65535),
                      ("node.local:80", "node.local", 80)])
    func valid(text: String, host: String, port: Int) throws {
        let parsed = try Session.parseAddress(text)
        #expect(parsed.host == host && parsed.port == port)
    }

    @Test("malformed addresses are refused with invalidAddress",
          arguments: ["", "host", ":7000", "host:", "host:0", "host:65536", "host:-1", "host:+80", "::1:7000", "[::1]", "[::1:7000",
                      "[::1]x7000", "host:７０"])
    func invalid(text: String) {
        #expect(throws: SessionError.self) { try Session.parseAddress(text) }
        do {
            _ = try Session.parseAddress(text)
        } catch {
            #expect(error.code == .invalidAddress)
        }
    }
}
