import Crypto
import Foundation
import MeshLink
@testable import MeshSession
import MeshTestSupport
import Synchronization
import Testing

/// A session with its own identity and resource directory, so that a test can stop it and start
/// another on the same identity and directory (a restart).
final class ResourceNode: Sendable {
    let session: Session
    let port: Int
    let identity: LocalIdentity
    let directory: String
    private let runner: Task<Void, Never>

    private let configure: @Sendable (inout Session.Configuration) -> Void

    init(_ name: String, identity: LocalIdentity? = nil, directory: String,
         configure: @escaping @Sendable (inout Session.Configuration) -> Void = { _ in }) async throws {
        let identity = try identity ?? LocalIdentity.generate()
        var configuration = Session.Configuration()
        configuration.host = "127.0.0.1"
        configuration.resources.directory = directory
        configuration.resources.minFreeBytes = 0
        configure(&configuration)
        self.configure = configure
        session = Session(peer: try LocalPeer(displayName: name, identity: identity, dataDirectory: directory), configuration: configuration)
        port = try await session.start()
        self.identity = identity
        self.directory = directory
        let session = self.session
        runner = Task { try? await session.run() }
    }

    var id: PeerID { session.peer.peerID }

    /// The same node started again on the same identity and directory.
    func restarted() async throws -> ResourceNode {
        await stop()
        return try await ResourceNode(id.displayName, identity: identity, directory: directory, configure: configure)
    }

    func stop() async {
        await session.disconnect()
        await runner.value
    }

    /// Chunk bytes this node's session sent so far.
    var chunkBytesSent: UInt64 { get async { await session.resourceShell.chunkBytesSent } }
}

/// Records a transfer's updates from one consuming task, for tests to wait on (bounded polling).
final class UpdateLog: Sendable {
    private let updates = Mutex<[ResourceUpdate]>([])
    private let consumer = Mutex<Task<Void, Never>?>(nil)

    init(_ progress: ResourceProgress) {
        let task = Task { [self] in
            for await update in progress { self.updates.withLock { $0.append(update) } }
        }
        consumer.withLock { $0 = task }
    }

    var all: [ResourceUpdate] { updates.withLock { $0 } }

    /// Waits until an update matches (bounded polling); fails at the deadline.
    @discardableResult
    func wait<T>(_ what: String, timeout: Duration = .seconds(60), _ match: (ResourceUpdate) -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = all.lazy.compactMap(match).first { return found }
            guard ContinuousClock.now < deadline else { throw TimeoutError(description: "\(what) within \(timeout); updates: \(all.suffix(5))") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func completed(timeout: Duration = .seconds(60)) async throws -> String? {
        try await wait("completed", timeout: timeout) { update -> String?? in
            if case .completed(let path) = update { return .some(path) }
            if case .failed(let failure) = update { Issue.record("failed: \(failure)"); return .some(nil) }
            return nil
        }
    }

    func firstProgress() async throws -> UInt64 {
        try await wait("a progress update") { update -> UInt64? in
            if case .progress(let snapshot) = update { return snapshot.bytes }
            return nil
        }
    }

    func paused() async throws { try await wait("paused") { $0 == .paused ? true : nil } }
}

/// The next resource event that `match` maps to a value; fails at the deadline.
func nextResourceEvent<T: Sendable>(_ node: ResourceNode, timeout: Duration = .seconds(30),
                                    _ match: @escaping @Sendable (ResourceEvent) -> T?) async throws -> T {
    try await nextMatch(node.session.resourceEvents, timeout: timeout, match)
}

/// Resources (PROTOCOL.md §16) on real sessions over loopback sockets.
@Suite("Resources over loopback", .serialized)
struct ResourceTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("meshchat-resources-\(UUID().uuidString)").path

    func file(_ name: String, bytes: Int) throws -> (path: String, sha256: Data) {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        var words = [UInt64](repeating: 0, count: (bytes + 7) / 8)
        for index in words.indices { words[index] = generator.next() }
        let content = words.withUnsafeBytes { Data($0.prefix(bytes)) }
        let path = root + "/" + name
        try content.write(to: URL(fileURLWithPath: path))
        return (path, Data(SHA256.hash(data: content)))
    }

    func sha256(_ path: String) throws -> Data { Data(SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path)))) }

    /// `a` linked to `b`; returns `b` as `a` sees it once reachable.
    static func link(_ a: ResourceNode, to b: ResourceNode) async throws -> PeerID {
        a.session.connect(host: "127.0.0.1", port: b.port)
        return try await waitForRoute(a, to: b.id)
    }

    static func waitForRoute(_ a: ResourceNode, to peer: PeerID, hops: Int? = nil) async throws -> PeerID {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if let route = a.session.route(to: peer), hops == nil || route.hops == hops { return route.peer }
            guard ContinuousClock.now < deadline else { throw TimeoutError(description: "no route to \(peer) within 10 s") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// A 24 MiB resource from `a` to `b` under way: the file, both sides' transfers and their logs.
    func startTransfer(from a: ResourceNode, to b: ResourceNode) async throws
        -> (source: (path: String, sha256: Data), sending: ResourceProgress, sent: UpdateLog, incoming: ResourceProgress, received: UpdateLog) {
        let bob = try await Self.link(a, to: b)
        let source = try file("big.bin", bytes: 24 * 1024 * 1024)
        let sending = try await a.session.sendResource(at: source.path, withName: "big.bin", to: bob)
        let sent = UpdateLog(sending)
        let incoming = try await Self.started(b)
        return (source, sending, sent, incoming, UpdateLog(incoming))
    }

    /// The next transfer `node` starts receiving.
    static func started(_ node: ResourceNode) async throws -> ResourceProgress {
        try await nextResourceEvent(node) { event -> ResourceProgress? in
            if case .startedReceiving(let progress) = event { return progress }
            return nil
        }
    }

    /// The next transfer `node` restores from its directory.
    static func restored(_ node: ResourceNode) async throws -> ResourceProgress {
        try await nextResourceEvent(node) { event -> ResourceProgress? in
            if case .restored(let progress) = event { return progress }
            return nil
        }
    }

    @Test("a 3 MB resource goes from A to C across relay B with its SHA-256; C sees it start and finish; B stores nothing; the journals are empty after")
    func acrossRelay() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let a = try await ResourceNode("alice", directory: root + "/a")
        let b = try await ResourceNode("bob", directory: root + "/b")
        let c = try await ResourceNode("carol", directory: root + "/c")
        defer { Task { for node in [a, b, c] { await node.stop() } } }
        _ = try await Self.link(a, to: b)
        _ = try await Self.link(c, to: b)
        let carol = try await Self.waitForRoute(a, to: c.id, hops: 2)
        let source = try file("photo.jpg", bytes: 3 * 1024 * 1024 + 17)

        let sending = try await a.session.sendResource(at: source.path, withName: "photo.jpg", to: carol)
        #expect(sending.direction == .outgoing && sending.size == 3 * 1024 * 1024 + 17 && sending.sha256 == source.sha256)
        let sent = UpdateLog(sending)
        let incoming = try await Self.started(c)
        #expect(incoming.name == "photo.jpg" && incoming.peer.id == a.id.id && incoming.size == sending.size && incoming.id == sending.id)
        let received = UpdateLog(incoming)
        let path = try #require(try await received.completed())
        #expect(try await sent.completed() == nil)
        #expect(try sha256(path) == source.sha256)
        #expect(path.hasPrefix(root + "/c/received/"))
        #expect(await a.chunkBytesSent <= UInt64(Double(sending.size) * 1.1))
        #expect(FileManager.default.subpaths(atPath: root + "/b")?.filter { !$0.hasSuffix("/") && $0.contains(".") }.isEmpty ?? true,
                "the relay stores nothing")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/a/outgoing").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/c/incoming").isEmpty)
        #expect(await a.session.resourceTransfers.isEmpty)
    }

    @Test("the link dropped mid-transfer and restored: the transfer pauses, resumes and completes without starting over (bytes sent ≤ 1.1 × the file)")
    func linkDroppedAndRestored() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let a = try await ResourceNode("alice", directory: root + "/a")
        let b = try await ResourceNode("bob", directory: root + "/b")
        defer { Task { [a, b] in for node in [a, b] { await node.stop() } } }
        let bob = try await Self.link(a, to: b)
        let source = try file("big.bin", bytes: 24 * 1024 * 1024)
        let sending = try await a.session.sendResource(at: source.path, withName: "big.bin", to: bob)
        let sent = UpdateLog(sending)
        let before = try await sent.firstProgress()
        #expect(before < sending.size, "the transfer must still run when the link drops")
        b.session.disconnect(a.id)
        a.session.disconnect(bob)
        try await sent.paused()
        let atPause = sending.snapshot.bytes
        _ = try await Self.link(a, to: b)
        try await sent.wait("resumed") { $0 == .resumed ? true : nil }
        #expect(try await sent.completed(timeout: .seconds(120)) == nil)
        let path = try await nextResourceEvent(b) { event -> String? in
            if case .finishedReceiving(_, .success(let path)) = event { return path }
            return nil
        }
        #expect(try sha256(path) == source.sha256)
        let total = await a.chunkBytesSent
        #expect(total <= UInt64(Double(sending.size) * 1.1), "sent \(total) bytes for \(sending.size) (paused at \(atPause))")
    }

    @Test("the receiver's session stopped mid-transfer and a new one started on the same directory: the transfer is restored, resumes and completes without starting over")
    func receiverRestart() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let a = try await ResourceNode("alice", directory: root + "/a")
        var b = try await ResourceNode("bob", directory: root + "/b")
        defer { Task { [a, b] in for node in [a, b] { await node.stop() } } }
        let (source, sending, sent, _, first) = try await startTransfer(from: a, to: b)
        _ = try await first.firstProgress()
        b = try await b.restarted()
        let stem = root + "/b/incoming/" + a.id.id.hex + "-" + sending.id.hex
        #expect(FileManager.default.fileExists(atPath: stem + ".part") && FileManager.default.fileExists(atPath: stem + ".json"))
        try await sent.paused()
        let restored = try await Self.restored(b)
        #expect(restored.id == sending.id && restored.direction == .incoming && restored.snapshot.bytes > 0)
        let again = UpdateLog(restored)
        _ = try await Self.link(a, to: b)
        let path = try #require(try await again.completed(timeout: .seconds(120)))
        #expect(try await sent.completed(timeout: .seconds(30)) == nil)
        #expect(try sha256(path) == source.sha256)
        let total = await a.chunkBytesSent
        #expect(total <= UInt64(Double(sending.size) * 1.1), "sent \(total) bytes for \(sending.size)")
    }

    @Test("the sender's session stopped mid-transfer and a new one started on the same directory: the transfer is restored, offered again, and completes from what the receiver holds")
    func senderRestart() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        var a = try await ResourceNode("alice", directory: root + "/a")
        let b = try await ResourceNode("bob", directory: root + "/b")
        defer { Task { [a, b] in for node in [a, b] { await node.stop() } } }
        let (source, sending, sent, incoming, received) = try await startTransfer(from: a, to: b)
        _ = try await sent.firstProgress()
        let sentBefore = await a.chunkBytesSent
        a = try await a.restarted()
        #expect(FileManager.default.fileExists(atPath: root + "/a/outgoing/" + sending.id.hex + ".json"))
        try await received.paused()
        let held = incoming.snapshot.bytes
        let restored = try await Self.restored(a)
        #expect(restored.id == sending.id && restored.direction == .outgoing && restored.peer.id == b.id.id)
        let resumed = UpdateLog(restored)
        _ = try await Self.link(a, to: b)
        #expect(try await resumed.completed(timeout: .seconds(120)) == nil)
        let path = try #require(try await received.completed(timeout: .seconds(30)))
        #expect(try sha256(path) == source.sha256)
        let afterRestart = await a.chunkBytesSent
        #expect(sentBefore + afterRestart <= UInt64(Double(sending.size) * 1.1),
                "sent \(sentBefore) + \(afterRestart) bytes for \(sending.size); the receiver held \(held)")
    }

    @Test("offers are refused by policy and limits (refuse, size, ask answered no), with the sender told why; bad sends throw; a file that changed while its transfer waited fails at restart")
    func policyAndChangedSource() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let a = try await ResourceNode("alice", directory: root + "/a")
        let refusing = try await ResourceNode("rita", directory: root + "/r") { $0.resources.acceptPolicy = .refuse }
        let small = try await ResourceNode("sam", directory: root + "/s") { $0.resources.maxIncomingSize = 1_000 }
        let asking = try await ResourceNode("ada", directory: root + "/q") { $0.resources.acceptPolicy = .ask(timeout: .seconds(30)) }
        defer { Task { for node in [a, refusing, small, asking] { await node.stop() } } }
        let source = try file("note.bin", bytes: 10_000)
        func failure(to node: ResourceNode) async throws -> ResourceFailure {
            let peer = try await Self.link(a, to: node)
            let log = UpdateLog(try await a.session.sendResource(at: source.path, withName: "note.bin", to: peer))
            return try await log.wait("failed") { update -> ResourceFailure? in
                if case .failed(let failure) = update { return failure }
                return nil
            }
        }
        let refused = try await failure(to: refusing)
        #expect(refused.code == .refused && refused.byPeer)
        let tooLarge = try await failure(to: small)
        #expect(tooLarge.code == .tooLarge && tooLarge.reason.contains("1000"))
        async let declined = failure(to: asking)
        let offer = try await nextResourceEvent(asking) { event -> ResourceOfferRequest? in
            if case .offered(let offer) = event { return offer }
            return nil
        }
        #expect(offer.name == "note.bin" && offer.size == 10_000 && offer.sender.id == a.id.id)
        await asking.session.answerResourceOffer(offer, accept: false)
        #expect(try await declined.code == .refused)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/q/incoming").isEmpty)

        // Bad sends throw, and nothing is recorded.
        let bare = Session(peer: try LocalPeer(displayName: "bare", identity: try LocalIdentity.generate()))
        let nobody = try LocalPeer(displayName: "nobody", identity: try LocalIdentity.generate()).peerID
        await #expect(throws: SessionError.resourcesUnavailable()) { try await bare.sendResource(at: source.path, withName: "x", to: nobody) }
        await #expect(throws: SessionError.invalidResource("")) { try await a.session.sendResource(at: root + "/missing", withName: "x", to: nobody) }
        await #expect(throws: SessionError.invalidResource("")) { try await a.session.sendResource(at: source.path, withName: "", to: nobody) }

        // A transfer to a node out of reach waits paused, recorded; its file changes; at restart it fails.
        var sender = try await ResourceNode("sid", directory: root + "/sid")
        let changing = try file("changing.bin", bytes: 5_000)
        let waiting = try await sender.session.sendResource(at: changing.path, withName: "changing.bin", to: nobody)
        #expect(waiting.isPaused)
        #expect(FileManager.default.fileExists(atPath: root + "/sid/outgoing/" + waiting.id.hex + ".json"))
        try Data(count: 5_001).write(to: URL(fileURLWithPath: changing.path))
        sender = try await sender.restarted()
        defer { Task { [sender] in await sender.stop() } }
        let restored = try await Self.restored(sender)
        guard case .failed(let changed)? = restored.outcome else { Issue.record("expected a failure, got \(String(describing: restored.outcome))"); return }
        #expect(changed.code == .sourceFailed)
        #expect(!FileManager.default.fileExists(atPath: root + "/sid/outgoing/" + waiting.id.hex + ".json"))
    }

    @Test("a source file changed while its transfer waited paused (same size, new bytes, new modification time): when the peer is reachable the transfer fails with sourceFailed on both sides before a chunk is sent, and the receiver keeps nothing")
    func changedWhilePaused() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let a = try await ResourceNode("alice", directory: root + "/a")
        let b = try await ResourceNode("bob", directory: root + "/b")
        defer { Task { [a, b] in for node in [a, b] { await node.stop() } } }
        let source = try file("draft.bin", bytes: 2_000_000)
        let sending = try await a.session.sendResource(at: source.path, withName: "draft.bin", to: b.id)
        #expect(sending.isPaused)
        let sent = UpdateLog(sending)
        // Rewritten in place with as many bytes: only the modification time tells (set apart from
        // the first one explicitly, so that a coarse file system clock cannot hide it).
        _ = try file("draft.bin", bytes: 2_000_000)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: source.path)
        _ = try await Self.link(a, to: b)
        func failure(_ log: UpdateLog) async throws -> ResourceFailure {
            try await log.wait("failed") { update -> ResourceFailure? in
                if case .failed(let failure) = update { return failure }
                return nil
            }
        }
        let mine = try await failure(sent)
        #expect(mine.code == .sourceFailed && !mine.byPeer && mine.reason.contains("changed"), "\(mine)")
        let theirs = try await failure(UpdateLog(try await Self.started(b)))
        #expect(theirs.code == .sourceFailed && theirs.byPeer, "\(theirs)")
        #expect(await a.chunkBytesSent == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/b/received").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/b/incoming").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/a/outgoing").isEmpty)
    }

    @Test("records in the resource directory are untrusted: a chunk size out of range, a size over the limit, a bad id, garbage and an orphan .part are removed at start, nothing traps, and a valid record beside them is restored")
    func hostileRecords() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let sender = try LocalIdentity.generate().nodeID.hex
        let incoming = root + "/n/incoming", outgoing = root + "/n/outgoing"
        for directory in [incoming, outgoing] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        func record(_ id: String, chunkSize: Int = 1_024, size: UInt64 = 10_000) -> String {
            #"{"id":"\#(id)","sender":"\#(sender)","senderName":"eve","name":"x","size":\#(size),"sha256":"\#(String(repeating: "ab", count: 32))","chunkSize":\#(chunkSize),"next":3,"stored":[-5,4,99999999999]}"#
        }
        let ids = (0..<4).map { _ in ResourceID.random().hex }
        let files: [(String, String)] = [
            ("\(sender)-\(ids[0]).json", record(ids[0], chunkSize: 1 << 40)),
            ("\(sender)-\(ids[1]).json", record(ids[1], size: UInt64.max)),
            ("\(sender)-zz.json", record("zz")),
            ("\(sender)-\(ids[2]).json", "{ not json"),
            ("\(sender)-\(ids[3]).json", record(ids[3])),
        ]
        for (name, text) in files { try Data(text.utf8).write(to: URL(fileURLWithPath: incoming + "/" + name)) }
        for id in ids { try Data(count: 3_072).write(to: URL(fileURLWithPath: incoming + "/\(sender)-\(id).part")) }
        try Data(count: 10).write(to: URL(fileURLWithPath: incoming + "/orphan.part"))
        try Data(#"{"id":"\#(ids[0])","peer":"\#(sender)","peerName":"eve","path":"/nonexistent","name":"x","size":18446744073709551615,"modified":0,"sha256":"00","chunkSize":-1}"#.utf8)
            .write(to: URL(fileURLWithPath: outgoing + "/\(ids[0]).json"))

        let node = try await ResourceNode("nina", directory: root + "/n")
        defer { Task { await node.stop() } }
        let restored = try await Self.restored(node)
        #expect(restored.id.hex == ids[3] && restored.direction == .incoming && restored.snapshot.bytes == 4 * 1_024)
        try await Self.waitUntil("the bad records are gone") {
            let left = Set((try? FileManager.default.contentsOfDirectory(atPath: incoming)) ?? [])
            return left == ["\(sender)-\(ids[3]).json", "\(sender)-\(ids[3]).part"]
                && ((try? FileManager.default.contentsOfDirectory(atPath: outgoing)) ?? ["?"]).isEmpty
        }
    }
}
