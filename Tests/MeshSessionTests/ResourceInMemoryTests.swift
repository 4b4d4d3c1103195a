import Crypto
import Foundation
@testable import MeshSession
import MeshTestSupport
import Testing

/// A resource (PROTOCOL.md §16) on the in-memory tier: A—B—C on an `InMemoryFabric` (no sockets,
/// virtual time), the B—C link cut mid-transfer and healed.
@Suite("Resources on the in-memory mesh")
struct ResourceInMemoryTests {
    @Test("a 24 MiB resource from A to C across B: B—C cut mid-way pauses it, healing resumes it, and it completes with its SHA-256 without starting over")
    func cutAndHealedAcrossRelay() async throws {
        try await withTestMesh { mesh in
            let nodes = try await mesh.line(["alice", "bob", "carol"]) { $0.resources.minFreeBytes = 0 }
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            try await mesh.advance(until: "A reaches C") { a.session.route(to: c.peer)?.hops == 2 }
            let carol = try #require(a.session.route(to: c.peer)?.peer)

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("memtier-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var generator = SystemRandomNumberGenerator()
            let content = Data((0..<(24 * 1024 * 1024 / 8)).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } })
            let path = directory + "/big.bin"
            try content.write(to: URL(fileURLWithPath: path))

            let sending = try await a.session.sendResource(at: path, withName: "big.bin", to: carol)
            let sent = UpdateLog(sending)
            try await mesh.advance(until: "the first bytes arrive") {
                sent.all.contains { if case .progress(let snapshot) = $0 { snapshot.bytes > 0 } else { false } }
            }
            await mesh.cut(b, c)
            try await mesh.advance(until: "the transfer pauses") { sent.all.contains(.paused) }
            #expect(sending.snapshot.bytes < sending.size, "the cut came mid-way")

            try await mesh.link(b, c)
            // Virtual time no faster than real time (a step per ≥ 20 ms of it): the retransmission
            // timers (0.5 s and up, on virtual time) must not run ahead of a loaded machine's work.
            try await mesh.advance(until: "the transfer completes", step: .milliseconds(20), limit: .seconds(600)) {
                sent.all.contains { if case .completed = $0 { true } else if case .failed = $0 { true } else { false } }
            }
            #expect(sent.all.contains(.resumed))
            #expect(!sent.all.contains { if case .failed = $0 { true } else { false } })
            let received = try await nextMatch(c.session.resourceEvents) { event -> String? in
                if case .finishedReceiving(_, .success(let path)) = event { return path }
                return nil
            }
            #expect(Data(SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: received)))) == Data(SHA256.hash(data: content)))
            let total = await a.session.resourceShell.chunkBytesSent
            #expect(total <= UInt64(Double(sending.size) * 1.1), "sent \(total) bytes for \(sending.size)")
        }
    }
}
