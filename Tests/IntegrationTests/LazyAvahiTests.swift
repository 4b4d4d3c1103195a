import Foundation
import MeshTestSupport
import Testing

/// libavahi-client is loaded on first use (CAvahi's shim.c), not linked (issue 16 item 7: an idle
/// peer's RSS). That discovery still works with it loaded is DiscoveryTests' part.
@Suite("libavahi-client loaded lazily")
struct LazyAvahiTests {
    @Test("meshchat --no-discovery maps neither libavahi nor libdbus")
    func noDiscoveryMapsNoAvahi() async throws {
        let directory = TemporaryDirectory()
        let chat = try ChatProcess.local("lazy", directory, ["--keep-running"])
        defer { chat.kill9() }
        _ = try await CommandLineTests.readyPort(chat)
        // Read to the end: /proc files report size 0, and String(contentsOfFile:) stopped at a page.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(chat.pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        #expect(maps.contains("libswiftCore"), "the maps were read")
        #expect(!maps.contains("libavahi"))
        #expect(!maps.contains("libdbus"))
    }
}
