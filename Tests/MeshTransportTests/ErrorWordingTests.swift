#if canImport(Glibc)
import Glibc
#endif
@testable import MeshTransport
import NIOCore
import Testing

/// How socket errors read to people (``EventLoops/describe(_:)``): the chat shows these
/// sentences after "could not connect to ADDRESS:".
@Suite("Socket errors in words")
struct ErrorWordingTests {
    @Test("the usual connect failures are short sentences, without NIO's wrapping or the errno")
    func usual() {
        #expect(EventLoops.describe(IOError(errnoCode: ECONNREFUSED, reason: "connection reset (error set)")) == "connection refused")
        #expect(EventLoops.describe(IOError(errnoCode: EHOSTUNREACH, reason: "connect")) == "no route to the host")
        #expect(EventLoops.describe(IOError(errnoCode: ETIMEDOUT, reason: "connect")) == "connection timed out")
        #expect(EventLoops.describe(ChannelError.connectTimeout(.seconds(10))) == "connection timed out after 10 s")
    }

    @Test("another errno keeps the system's description")
    func other() {
        let text = EventLoops.describe(IOError(errnoCode: EMFILE, reason: "accept"))
        #expect(text.contains("accept") && !text.isEmpty)
    }

    @Test("addresses read as people write them")
    func addresses() throws {
        #expect(EventLoops.format(try SocketAddress(ipAddress: "127.0.0.1", port: 4000)) == "127.0.0.1:4000")
        #expect(EventLoops.format(try SocketAddress(ipAddress: "::1", port: 4000)) == "[::1]:4000")
    }
}
