import Foundation
import MeshTestSupport
import Testing

/// Hostile bytes from the network against a real `meshchat` process: each one closes only that
/// connection, with a logged reason, while the peer keeps serving its other peers.
@Suite("hostile input", .serialized)
struct HostileInputTests {
    /// A listening alice with a connected bob, alice logging at notice on stderr.
    static func victim(_ directory: TemporaryDirectory) async throws -> (ChatProcess, ChatProcess, Int) {
        try await TwoPeerTests.connectedPair(directory, extra: ["--log-level", "notice"])
    }

    /// Alice still serves bob: a message goes through after the attack.
    static func stillServes(_ alice: ChatProcess, _ bob: ChatProcess, marker: String) async throws {
        bob.send(marker)
        try await alice.waitForEvent("\"text\":\"\(marker)\"")
        #expect(!alice.output.contains { $0.contains("\"state\":\"notConnected\"") })
    }

    @Test("random bytes instead of a handshake close that connection with a logged reason")
    func randomBytes() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, port) = try await Self.victim(directory)
        var generator = SystemRandomNumberGenerator()
        // A frame header with type HANDSHAKE and a plausible length, then garbage: too short for a
        // Noise ephemeral key, so message 1 is malformed.
        let client = try RawTCPClient(port: port)
        client.send([0, 0, 0, 21, 1] + (0..<20).map { _ in UInt8.random(in: 0...255, using: &generator) })
        #expect(client.readUntilClosed(timeout: 5).closed)
        // Pure noise: an unknown frame type or an oversized length.
        let noise = try RawTCPClient(port: port)
        noise.send([0, 0, 0, 9, 0x77] + (0..<200).map { _ in UInt8.random(in: 0...255, using: &generator) })
        #expect(noise.readUntilClosed(timeout: 5).closed)
        try await Self.stillServes(alice, bob, marker: "after random bytes")
        #expect(alice.errors.contains("handshake message 1 is malformed"))
        #expect(alice.errors.contains("unknown frame type 0x77"))
    }

    @Test("a 4 GiB length prefix is refused after four bytes")
    func hugeLength() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, port) = try await Self.victim(directory)
        let client = try RawTCPClient(port: port)
        client.send([0xff, 0xff, 0xff, 0xff])
        #expect(client.readUntilClosed(timeout: 5).closed)
        try await Self.stillServes(alice, bob, marker: "after a huge length")
        #expect(alice.errors.contains("frame length 4294967295 exceeds the maximum 65536"))
        #expect(alice.residentBytes ?? 0 < 200 * 1024 * 1024)
    }

    @Test("half a handshake followed by silence is closed at the 10 s handshake timeout")
    func halfHandshake() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, port) = try await Self.victim(directory)
        let client = try RawTCPClient(port: port)
        // Message 1 of Noise XX is a clear 32-byte ephemeral key and the clear Hello payload
        // (protocol_version 8, service_type "meshchat", suites [ChaChaPoly], suite ChaChaPoly);
        // any 32 bytes serve as a key.
        let hello: [UInt8] = [0x08, 0x08, 0x12, 0x08] + Array("meshchat".utf8) + [0x1a, 0x01, 0x01, 0x20, 0x01]
        let body = [UInt8](repeating: 9, count: 32) + hello
        client.send([0, 0, 0, UInt8(body.count + 1), 0x01] + body)
        let start = ContinuousClock.now
        let (answer, closed) = client.readUntilClosed(timeout: 15)
        let elapsed = ContinuousClock.now - start
        #expect(closed)
        #expect(answer.count > 5 && answer[4] == 0x01, "alice answers with handshake message 2")
        #expect(elapsed > .seconds(9) && elapsed < .seconds(12), "closed after \(elapsed)")
        try await Self.stillServes(alice, bob, marker: "after a half handshake")
        #expect(alice.errors.contains("handshakeTimeout"))
    }

    @Test("10,000 connections opened and dropped: memory stays bounded and the peer keeps serving")
    func connectionFlood() async throws {
        let directory = TemporaryDirectory()
        let (alice, bob, port) = try await Self.victim(directory)
        let before = try #require(alice.residentBytes)
        var refused = 0
        for i in 0..<10_000 {
            do {
                let client = try RawTCPClient(port: port)
                if i % 2 == 0 { client.send([0, 0, 0, 33, 1]) }  // half a frame header, then gone
                client.close(abortive: i % 3 == 0)
            } catch {
                refused += 1
            }
        }
        try await Self.stillServes(alice, bob, marker: "after the flood")
        let after = try #require(alice.residentBytes)
        #expect(refused < 100, "\(refused) connections refused")
        #expect(after - before < 40 * 1024 * 1024, "RSS grew from \(before) to \(after) bytes")
    }
}
