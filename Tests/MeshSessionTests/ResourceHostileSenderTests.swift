import Crypto
import Foundation
@testable import MeshSession
import MeshTestSupport
import MeshWire
import Testing

/// The resource shell against a hostile sender on real sockets: mallory takes channel 17 from her
/// own shell and crafts resource messages by hand; bob runs the real shell. Every bad message is
/// refused with a cancel naming why, nothing is left in bob's resource directory, and the link
/// stays up.
@Suite("Resources against a hostile sender", .serialized)
struct ResourceHostileSenderTests {
    static func message(_ id: Data, _ body: ResourceMessagePayload.OneOf_Body) -> Data {
        var message = ResourceMessagePayload()
        message.transferID = id
        message.body = body
        return message.serialized
    }

    static func offer(name: String, content: Data, hash: Data? = nil, size: UInt64? = nil) -> ResourceMessagePayload.OneOf_Body {
        var offer = ResourceOfferPayload()
        offer.name = name
        offer.size = size ?? UInt64(content.count)
        offer.sha256 = hash ?? Data(SHA256.hash(data: content))
        offer.chunkSize = 1_024
        return .offer(offer)
    }

    static func chunk(_ index: UInt32, _ data: Data) -> ResourceMessagePayload.OneOf_Body {
        var chunk = ResourceChunkPayload()
        chunk.index = index
        chunk.data = data
        return .chunk(chunk)
    }

    /// The next message on mallory's channel 17 about `id` that `match` accepts.
    static func reply<T: Sendable>(_ channel: MeshChannel, _ id: Data, timeout: Duration = .seconds(10),
                                   _ match: @escaping @Sendable (ResourceMessagePayload.OneOf_Body) -> T?) async throws -> T {
        try await nextMatch(channel.messages, timeout: timeout) { message -> T? in
            guard let decoded = try? ResourceMessagePayload(decoding: message.payload, what: "reply"), decoded.transferID == id,
                  let body = decoded.body else { return nil }
            return match(body)
        }
    }

    static func cancelCode(_ channel: MeshChannel, _ id: Data) async throws -> ResourceCancelCode {
        try await reply(channel, id) { body in
            if case .cancel(let cancel) = body { return ResourceCancelCode(wire: cancel.code) }
            return nil
        }
    }

    @Test("a crafted name reaches the application untouched but never a path; chunks out of range, a wrong hash, an unknown transfer, an oversized offer, garbage and a fifth transfer at once are each refused with their code; nothing is left on disk; the link stays up")
    func hostileSender() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("meshchat-hostile-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let mallory = try await ResourceNode("mallory", directory: root + "/m")
        let bob = try await ResourceNode("bob", directory: root + "/b") { $0.resources.maxIncomingSize = 1_000_000 }
        defer { Task { for node in [mallory, bob] { await node.stop() } } }
        let bobPeer = try await ResourceTests.link(mallory, to: bob)
        // mallory's own shell gives up channel 17 to the test.
        try await ResourceTests.waitUntil("mallory's shell registered channel 17") { await mallory.session.resourceShell.channel != nil }
        await mallory.session.resourceShell.channel?.close()
        let channel = try mallory.session.register(channel: .resources)
        func send(_ id: Data, _ body: ResourceMessagePayload.OneOf_Body) async throws {
            try await channel.send(Self.message(id, body), to: bobPeer)
        }
        let content = Data("ten bytes!".utf8)
        let incoming = root + "/b/incoming"

        // 1. A path in the name: the application sees the text; the files are named by ids only.
        let first = ResourceID.random().bytes
        try await send(first, Self.offer(name: "../../.ssh/authorized_keys\n", content: content))
        let started = try await nextResourceEvent(bob) { event -> ResourceProgress? in
            if case .startedReceiving(let progress) = event { return progress }
            return nil
        }
        #expect(started.name == "../../.ssh/authorized_keys\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: incoming).sorted()
                == [mallory.id.id.hex + "-" + first.hexString + ".json", mallory.id.id.hex + "-" + first.hexString + ".part"])
        try await send(first, Self.chunk(5, content))
        #expect(try await Self.cancelCode(channel, first) == .protocolViolation)

        // 2. The content does not match the offer's hash.
        let second = ResourceID.random().bytes
        try await send(second, Self.offer(name: "a.txt", content: content, hash: Data(repeating: 1, count: 32)))
        try await send(second, Self.chunk(0, content))
        #expect(try await Self.cancelCode(channel, second) == .hashMismatch)

        // 3. A chunk of a transfer bob never heard of; 4. an offer over bob's limit.
        let third = ResourceID.random().bytes
        try await send(third, Self.chunk(0, content))
        #expect(try await Self.cancelCode(channel, third) == .unknownTransfer)
        let fourth = ResourceID.random().bytes
        try await send(fourth, Self.offer(name: "huge.iso", content: content, size: 1_000_001))
        #expect(try await Self.cancelCode(channel, fourth) == .tooLarge)
        // Garbage and a short id are dropped (logged), nothing else.
        try await channel.send(Data([0xff, 0xff, 0xff]), to: bobPeer)
        try await send(Data([1, 2, 3]), Self.offer(name: "short id", content: content))

        // Nothing is left on disk, and the link is still up.
        try await ResourceTests.waitUntil("bob's incoming directory is empty") {
            ((try? FileManager.default.contentsOfDirectory(atPath: incoming)) ?? ["?"]).isEmpty
        }
        #expect(mallory.session.connectedPeers.map(\.id) == [bob.id.id])

        // 5. A well-formed transfer still works on the same link.
        let fifth = ResourceID.random().bytes
        try await send(fifth, Self.offer(name: "ok.txt", content: content))
        try await send(fifth, Self.chunk(0, content))
        #expect(try await Self.reply(channel, fifth) { body -> Bool? in
            if case .done(let done) = body { return done.sha256 == Data(SHA256.hash(data: content)) }
            return nil
        })
        let path = try await nextResourceEvent(bob) { event -> String? in
            if case .finishedReceiving(let progress, .success(let path)) = event, progress.id.bytes == fifth { return path }
            return nil
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == content)

        // 6. At most 4 at once from one peer: the fifth offer is refused as busy.
        for index in 0..<4 {
            try await send(ResourceID.random().bytes, Self.offer(name: "slow \(index).bin", content: Data(count: 50_000)))
        }
        let extra = ResourceID.random().bytes
        try await send(extra, Self.offer(name: "one more.bin", content: content))
        #expect(try await Self.cancelCode(channel, extra) == .busy)
        #expect(mallory.session.connectedPeers.map(\.id) == [bob.id.id])
    }

    /// What bob answers about `id`: the hash of a `ResourceDone`, or a word for anything else.
    static func answer(_ channel: MeshChannel, _ id: Data) async throws -> String {
        try await reply(channel, id) { body -> String? in
            switch body {
            case .done(let done): return done.sha256.hexString
            case .ack: return "ack"
            case .cancel(let cancel): return "cancel \(cancel.code)"
            default: return nil
            }
        }
    }

    @Test("a transfer received whole is remembered on disk: after the receiver restarts (its 10-minute memory gone), a repeated offer and a late chunk of it are answered with its ResourceDone again; no second transfer starts, no second file is stored")
    func lateDuplicate() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("meshchat-late-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let mallory = try await ResourceNode("mallory", directory: root + "/m")
        var bob = try await ResourceNode("bob", directory: root + "/b")
        defer { Task { [mallory, bob] in for node in [mallory, bob] { await node.stop() } } }
        let bobPeer = try await ResourceTests.link(mallory, to: bob)
        try await ResourceTests.waitUntil("mallory's shell registered channel 17") { await mallory.session.resourceShell.channel != nil }
        await mallory.session.resourceShell.channel?.close()
        let channel = try mallory.session.register(channel: .resources)
        let content = Data("ten bytes!".utf8)
        let hash = Data(SHA256.hash(data: content)).hexString
        let id = ResourceID.random().bytes

        try await channel.send(Self.message(id, Self.offer(name: "once.txt", content: content)), to: bobPeer)
        #expect(try await Self.answer(channel, id) == "ack")
        try await channel.send(Self.message(id, Self.chunk(0, content)), to: bobPeer)
        _ = try await Self.reply(channel, id) { body -> Bool? in
            if case .done = body { return true }
            return nil
        }
        let path = try await nextResourceEvent(bob) { event -> String? in
            if case .finishedReceiving(_, .success(let path)) = event { return path }
            return nil
        }
        try FileManager.default.removeItem(atPath: path)  // the application took it away
        #expect(FileManager.default.fileExists(atPath: root + "/b/finished/" + mallory.id.id.hex + "-" + id.hexString))

        bob = try await bob.restarted()
        let again = try await ResourceTests.link(mallory, to: bob)
        try await channel.send(Self.message(id, Self.offer(name: "once.txt", content: content)), to: again)
        #expect(try await Self.answer(channel, id) == hash)
        try await channel.send(Self.message(id, Self.chunk(0, content)), to: again)
        #expect(try await Self.answer(channel, id) == hash)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/b/incoming").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/b/received").isEmpty)

        // A malformed record is untrusted input: removed, and the transfer is unknown again.
        let other = ResourceID.random().bytes
        let record = root + "/b/finished/" + mallory.id.id.hex + "-" + other.hexString
        try Data("not a hash".utf8).write(to: URL(fileURLWithPath: record))
        try await channel.send(Self.message(other, Self.chunk(0, content)), to: again)
        #expect(try await Self.answer(channel, other) == "cancel \(ResourceCancelCode.unknownTransfer.rawValue)")
        #expect(!FileManager.default.fileExists(atPath: record))
    }
}

extension ResourceTests {
    /// Waits until a condition holds (bounded polling), or fails.
    static func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !(await condition()) {
            guard ContinuousClock.now < deadline else { throw TimeoutError(description: "\(what) within \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
