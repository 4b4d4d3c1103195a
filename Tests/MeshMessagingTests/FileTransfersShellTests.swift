import Crypto
import Foundation
import Logging
import MeshLink
import MeshMessaging
import MeshSession
import MeshWire
import Testing

/// mallory linked to bob, who runs a ``FileTransfers`` shell over a new downloads directory.
struct ShellPair {
    let downloads: String
    let mallory: Peer
    let bob: Peer
    let files: FileTransfers
    let feeder: Task<Void, Never>
    /// bob as mallory sees him, once reachable.
    let bobPeer: PeerID

    init() async throws {
        downloads = FileManager.default.temporaryDirectory.appendingPathComponent("meshchat-files-\(UUID().uuidString)").path
        let mallory = try await Peer("mallory"), bob = try await Peer("bob")
        let files = FileTransfers(session: bob.session, downloads: downloads, tick: .milliseconds(20),
                                  logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        feeder = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await files.run() }
                for await event in bob.session.events { await files.handle(event) }
                group.cancelAll()
            }
        }
        mallory.session.connect(host: "127.0.0.1", port: bob.port)
        let bobID = bob.id.id
        bobPeer = try await next(mallory.session.events) { event -> PeerID? in
            if case .reachabilityChanged(let peer, _?) = event, peer.id == bobID { return peer }
            return nil
        }
        (self.mallory, self.bob, self.files) = (mallory, bob, files)
    }
}

/// ``FileTransfers`` against a hostile sender on real sockets: mallory crafts file messages by
/// hand with ``Session/sendFile(_:to:)``; bob runs the shell. Every bad message is refused with
/// a cancel naming why, nothing is left in bob's downloads, and the link stays up.
@Suite("FileTransfers against a hostile sender", .serialized)
struct FileTransfersShellTests {
    static func message(_ id: Data, _ body: FileTransferPayload.OneOf_Body) -> FileTransferPayload {
        var message = FileTransferPayload()
        message.transferID = id
        message.body = body
        return message
    }

    static func offer(name: String, content: Data, hash: Data? = nil, size: UInt64? = nil) -> FileTransferPayload.OneOf_Body {
        var offer = FileOfferPayload()
        offer.name = name
        offer.size = size ?? UInt64(content.count)
        offer.sha256 = hash ?? Data(SHA256.hash(data: content))
        offer.chunkSize = 1_024
        return .offer(offer)
    }

    static func chunk(_ index: UInt32, _ data: Data) -> FileTransferPayload.OneOf_Body {
        var chunk = FileChunkPayload()
        chunk.index = index
        chunk.data = data
        return .chunk(chunk)
    }

    @Test("a crafted name is sanitised; chunks out of range, a wrong hash, an unknown transfer, an oversized offer and a fifth transfer at once are each refused with their code; nothing is left on disk; the link stays up")
    func hostileSender() async throws {
        let pair = try await ShellPair()
        defer { try? FileManager.default.removeItem(atPath: pair.downloads) }
        let (downloads, mallory, bob, files, feeder, bobPeer) = (pair.downloads, pair.mallory, pair.bob, pair.files, pair.feeder, pair.bobPeer)
        let bobID = bob.id.id
        /// The cancel (or other reply) mallory gets for a transfer id.
        func reply(_ id: Data) async throws -> FileTransferPayload.OneOf_Body {
            try await next(mallory.session.events) { event -> FileTransferPayload.OneOf_Body? in
                if case .file(let message, _, _) = event, message.transferID == id, case .cancel? = message.body { return message.body }
                return nil
            }
        }
        func cancelCode(_ body: FileTransferPayload.OneOf_Body) -> FileCancelCode? {
            if case .cancel(let cancel) = body { return FileCancelCode(wire: cancel.code) }
            return nil
        }
        let content = Data("ten bytes!".utf8)

        // 1. A path in the name: stored as its last component; then a chunk out of range.
        let first = FileTransferID.random().bytes
        try await mallory.session.sendFile(Self.message(first, Self.offer(name: "../../.ssh/authorized_keys\n", content: content)), to: bobPeer)
        let offered = try await next(files.events) { event -> FileTransferInfo? in
            if case .offered(let info) = event { return info }
            return nil
        }
        #expect(offered.name == "authorized_keys")
        #expect(offered.direction == .incoming)
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads).contains { $0.hasSuffix(".part") })
        try await mallory.session.sendFile(Self.message(first, Self.chunk(5, content)), to: bobPeer)
        let outOfRange = try await reply(first)
        #expect(cancelCode(outOfRange) == .protocolViolation)
        if case .cancel(let cancel) = outOfRange { #expect(cancel.reason.contains("out of range")) }

        // 2. The content does not match the offer's hash.
        let second = FileTransferID.random().bytes
        try await mallory.session.sendFile(Self.message(second, Self.offer(name: "a.txt", content: content, hash: Data(repeating: 1, count: 32))), to: bobPeer)
        try await mallory.session.sendFile(Self.message(second, Self.chunk(0, content)), to: bobPeer)
        #expect(cancelCode(try await reply(second)) == .hashMismatch)
        let mismatch = try await next(files.events) { event -> FileTransferFailure? in
            if case .failed(let info, let failure) = event, info.id.bytes == second { return failure }
            return nil
        }
        #expect(mismatch.code == .hashMismatch)

        // 3. A chunk of a transfer bob never heard of.
        let third = FileTransferID.random().bytes
        try await mallory.session.sendFile(Self.message(third, Self.chunk(0, content)), to: bobPeer)
        #expect(cancelCode(try await reply(third)) == .unknownTransfer)

        // 4. An offer over the limit.
        let fourth = FileTransferID.random().bytes
        try await mallory.session.sendFile(Self.message(fourth, Self.offer(name: "huge.iso", content: content, size: FileTransferLimits.maxFileSize + 1)), to: bobPeer)
        #expect(cancelCode(try await reply(fourth)) == .tooLarge)

        // Nothing is left on disk, and the link is still up.
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads).isEmpty)
        #expect(mallory.session.connectedPeers.map(\.id) == [bobID])

        // 5. A well-formed transfer still works on the same link, and lands under its name.
        let fifth = FileTransferID.random().bytes
        try await mallory.session.sendFile(Self.message(fifth, Self.offer(name: "ok.txt", content: content)), to: bobPeer)
        try await mallory.session.sendFile(Self.message(fifth, Self.chunk(0, content)), to: bobPeer)
        let path = try await next(files.events) { event -> String? in
            if case .received(let info, let path) = event, info.id.bytes == fifth { return path }
            return nil
        }
        #expect(path == downloads + "/ok.txt")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == content)
        let attributes = try FileManager.default.attributesOfItem(atPath: downloads)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)

        // 6. At most 4 files at once from one peer: the fifth offer is refused as busy.
        var pending: [Data] = []
        for index in 0..<FileTransferLimits.maxTransfersPerPeer {
            let id = FileTransferID.random().bytes
            pending.append(id)
            try await mallory.session.sendFile(Self.message(id, Self.offer(name: "slow \(index).bin", content: Data(count: 50_000))), to: bobPeer)
        }
        let fifth2 = FileTransferID.random().bytes
        try await mallory.session.sendFile(Self.message(fifth2, Self.offer(name: "one more.bin", content: content)), to: bobPeer)
        let busy = try await reply(fifth2)
        #expect(cancelCode(busy) == .busy)
        if case .cancel(let cancel) = busy { #expect(cancel.reason.contains("at most \(FileTransferLimits.maxTransfersPerPeer)")) }
        #expect(await files.running.count == FileTransferLimits.maxTransfersPerPeer)

        // 7. At most 4 files at once to one peer: mallory never answers bob's offers.
        let source = downloads + "-source.txt"
        defer { try? FileManager.default.removeItem(atPath: source) }
        try content.write(to: URL(fileURLWithPath: source))
        let malloryPeer = try #require(bob.session.reachablePeers.first { $0.peer.id == mallory.id.id }?.peer)
        for _ in 0..<FileTransferLimits.maxTransfersPerPeer {
            let info = try await files.send(path: source, to: malloryPeer)
            #expect(info.sha256 == Data(SHA256.hash(data: content)).map { String(format: "%02x", $0) }.joined())
        }
        await #expect(throws: FileTransferError.self) { try await files.send(path: source, to: malloryPeer) }
        do {
            try await files.send(path: source, to: malloryPeer)
        } catch {
            #expect(error.message.contains("at most \(FileTransferLimits.maxTransfersPerPeer) at once"))
        }

        // 8. Cancelling everything (before a session disconnects) tells the peer and removes the .part files.
        await files.cancelAll()
        #expect(cancelCode(try await reply(pending[0])) == .cancelled)
        #expect(await files.running.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads) == ["ok.txt"])

        await mallory.stop()
        await bob.stop()
        feeder.cancel()
        await feeder.value
    }

    @Test("§16.2: a 0-byte file is stored and confirmed at once; its offer repeated after it finished (the FileDone was lost) gets the FileDone again")
    func emptyFile() async throws {
        let pair = try await ShellPair()
        defer { try? FileManager.default.removeItem(atPath: pair.downloads) }
        let (downloads, mallory, bob, feeder, bobPeer) = (pair.downloads, pair.mallory, pair.bob, pair.feeder, pair.bobPeer)
        let empty = Data(SHA256.hash(data: Data()))
        /// The FileDone mallory gets for a transfer id.
        func done(_ id: Data) async throws -> Data {
            try await next(mallory.session.events) { event -> Data? in
                if case .file(let message, _, _) = event, message.transferID == id, case .done(let done)? = message.body { return done.sha256 }
                return nil
            }
        }
        let id = FileTransferID.random().bytes
        try await mallory.session.sendFile(Self.message(id, Self.offer(name: "empty.txt", content: Data())), to: bobPeer)
        #expect(try await done(id) == empty)
        let listed = try FileManager.default.contentsOfDirectory(atPath: downloads)
        #expect(listed == ["empty.txt"], "\(listed)")
        try await mallory.session.sendFile(Self.message(id, Self.offer(name: "empty.txt", content: Data())), to: bobPeer)
        #expect(try await done(id) == empty, "the repeated offer of a finished transfer is answered with its FileDone")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads) == ["empty.txt"], "and not stored twice")

        await mallory.stop()
        await bob.stop()
        feeder.cancel()
        await feeder.value
    }

    @Test("the downloads directory is $XDG_DOWNLOAD_DIR/meshchat when that is absolute, else ~/Downloads/meshchat")
    func defaultDownloads() {
        #expect(FileTransfers.defaultDownloads(environment: ["XDG_DOWNLOAD_DIR": "/data/dl", "HOME": "/home/me"]) == "/data/dl/meshchat")
        #expect(FileTransfers.defaultDownloads(environment: ["XDG_DOWNLOAD_DIR": "relative", "HOME": "/home/me"]) == "/home/me/Downloads/meshchat")
        #expect(FileTransfers.defaultDownloads(environment: ["HOME": "/home/me"]) == "/home/me/Downloads/meshchat")
    }
}
