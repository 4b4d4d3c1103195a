import Foundation
import MeshLink
import MeshSession
import MeshTransport
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded

/// A session on a ``TestMesh``: its address on the fabric and its captured logs.
public struct TestNode: Sendable, CustomStringConvertible {
    /// The name it was given (also its display name).
    public let name: String
    /// Its address on the fabric.
    public let host: String
    /// The real session, on the fabric's loop.
    public let session: Session
    /// What it logged (debug and above).
    public let logs: LogCapture
    /// The session events it reported, when the mesh reads them (``TestMesh/node(_:readsEvents:configure:)``).
    let seen: NIOLockedValueBox<[SessionEvent]>

    /// The session events it reported so far (when the mesh reads them), oldest first.
    public var events: [SessionEvent] { seen.withLockedValue { $0 } }

    /// Whether it reported an event that `match` accepts.
    /// - Parameter match: the test.
    /// - Returns: whether one was seen.
    public func saw(_ match: (SessionEvent) -> Bool) -> Bool { seen.withLockedValue { $0.contains(where: match) } }

    /// Its peer id.
    public var peer: PeerID { session.peer.peerID }
    /// Its listening port on the fabric.
    public var port: Int { session.port ?? 0 }
    /// `name@host`.
    public var description: String { "\(name)@\(host)" }
}

/// N real sessions on an ``InMemoryFabric`` with explicit adjacency and virtual time: the
/// in-process test tier (STYLE.md §5 item 5), between pure state-machine tests and real sockets.
///
/// Use it through ``withTestMesh(_:)``, which always tears it down and prints every node's logs
/// when the body throws. Virtual time stands still unless a test moves it (``advance(by:)``,
/// ``advance(until:step:limit:_:)``): handshakes, relays and deliveries need no time, while every
/// NIO timer (keepalive, handshake deadline, the mesh's advert timer) and every
/// `Session.sleep(for:)` (an outbox tick) fires only when advanced past.
///
/// This type is thread-safe.
public final class TestMesh: Sendable {
    /// The fabric the nodes' links run on.
    public let fabric: InMemoryFabric
    /// The loop whose clock is the mesh's virtual time.
    public var loop: NIOAsyncTestingEventLoop { fabric.loop }

    private let nodes = NIOLockedValueBox<[TestNode]>([])
    private let tasks = NIOLockedValueBox<[Task<Void, Never>]>([])
    private let runners = NIOLockedValueBox<[Task<Void, Never>]>([])
    private let scratch: String

    init() throws {
        fabric = InMemoryFabric()
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("testmesh-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    // MARK: Nodes and links

    /// Starts a session on the fabric at the next address (10.0.0.1, 10.0.0.2, …).
    /// - Parameters:
    ///   - name: its display name.
    ///   - readsEvents: whether the mesh reads its ``MeshSession/Session/events`` (into ``TestNode/seen``);
    ///     `false` when an application (a messenger) reads them.
    ///   - identity: its keys (new ones when `nil`).
    ///   - configure: changes to its configuration (the fabric, loop and address are set after it).
    /// - Returns: the node, started and running.
    /// - Throws: when the session cannot start.
    public func node(_ name: String, readsEvents: Bool = true, identity: LocalIdentity? = nil,
                     configure: (inout Session.Configuration) -> Void = { _ in }) async throws -> TestNode {
        let number = nodes.withLockedValue { $0.count } + 1
        let host = "10.0.0.\(number)"
        var configuration = Session.Configuration()
        configuration.resources.directory = "\(scratch)/\(name)-resources"
        configure(&configuration)
        configuration.host = host
        configuration.enableUnreliable = false
        configuration.eventLoopGroup = fabric.loop
        configuration.transport.fabric = fabric.attach(host)
        let logs = LogCapture()
        let peer = try LocalPeer(displayName: name, identity: try identity ?? LocalIdentity.generate())
        let session = Session(peer: peer, configuration: configuration, logger: logs.logger(label: name))
        try await session.start()
        let node = TestNode(name: name, host: host, session: session, logs: logs, seen: NIOLockedValueBox([]))
        nodes.withLockedValue { $0.append(node) }
        let runner = Task { do { try await session.run() } catch {} }
        runners.withLockedValue { $0.append(runner) }
        if readsEvents {
            spawn {
                for await event in session.events {
                    node.seen.withLockedValue { seen in
                        if seen.count >= 10_000 { seen.removeFirst() }
                        seen.append(event)
                    }
                }
            }
        }
        return node
    }

    /// Starts nodes and links each to the next: a line `names[0]—names[1]—…`.
    /// - Parameters:
    ///   - names: the nodes' names.
    ///   - configure: changes to each node's configuration.
    /// - Returns: the nodes in line order, once every link is up.
    /// - Throws: when a node cannot start or a link does not come up.
    public func line(_ names: [String], configure: (inout Session.Configuration) -> Void = { _ in }) async throws -> [TestNode] {
        var made: [TestNode] = []
        for name in names { made.append(try await node(name, configure: configure)) }
        for (a, b) in zip(made, made.dropFirst()) { try await link(a, b) }
        return made
    }

    /// Links `a` to `b` (`a` dials), lifting a cut between them first, and waits until both
    /// report each other connected.
    /// - Throws: when the link is not up within the real-time bound.
    public func link(_ a: TestNode, _ b: TestNode) async throws {
        fabric.heal(a.host, b.host)
        a.session.connect(host: b.host, port: b.port)
        try await waitUntil("\(a) and \(b) are connected") {
            a.session.connectedPeers.contains { $0.id == b.peer.id } && b.session.connectedPeers.contains { $0.id == a.peer.id }
        }
    }

    /// Drops the link between two nodes as a lost connection, and refuses new ones until
    /// ``link(_:_:)`` heals it.
    public func cut(_ a: TestNode, _ b: TestNode) async {
        await fabric.cut(a.host, b.host)
    }

    // MARK: Time

    /// Virtual time now: 0 when the mesh starts. (Read it here or from `Session.loopNow`: a file
    /// that does not import NIOEmbedded would get `EventLoop`'s default `now`, the wall clock.)
    public var now: NIODeadline { loop.now }

    /// Virtual time since the mesh started.
    public var elapsed: Duration { .nanoseconds(Int64(clamping: loop.now.uptimeNanoseconds)) }

    /// Moves virtual time forward, firing every timer due meanwhile in order.
    /// - Parameter duration: how far.
    public func advance(by duration: Duration) async {
        await loop.advanceTime(by: Self.amount(duration))
    }

    /// Moves virtual time forward in steps until `condition` holds, giving the nodes' tasks a
    /// moment of real time after each step.
    /// - Parameters:
    ///   - what: what is awaited, for the error.
    ///   - step: virtual time per step.
    ///   - limit: the most virtual time to spend.
    ///   - condition: checked before each step.
    /// - Throws: ``TestMeshTimeout`` when `limit` passes first.
    public func advance(until what: String, step: Duration = .milliseconds(100), limit: Duration = .seconds(60),
                        _ condition: () async -> Bool) async throws {
        var spent = Duration.zero
        while true {
            if await settled(condition) { return }
            guard spent < limit else { throw TestMeshTimeout(description: "\(what) did not happen within \(limit) of virtual time") }
            await advance(by: step)
            spent += step
        }
    }

    /// Waits in real time, without moving virtual time, until `condition` holds (bounded polling:
    /// for state with no event of its own, such as a route or a connected peer).
    /// - Parameters:
    ///   - what: what is awaited, for the error.
    ///   - timeout: the real-time bound.
    ///   - condition: the condition.
    /// - Throws: ``TestMeshTimeout`` at the bound.
    public func waitUntil(_ what: String, timeout: Duration = .seconds(20), _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !(await condition()) {
            guard ContinuousClock.now < deadline else { throw TestMeshTimeout(description: "\(what) did not happen within \(timeout)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// The next element of an event queue that `match` maps to a value, skipping others, within a
    /// real-time bound (virtual time does not move meanwhile): ``nextMatch(_:timeout:_:)``.
    public func next<Element: Sendable, T: Sendable>(_ queue: EventQueue<Element>, timeout: Duration = .seconds(20),
                                                     _ match: @escaping @Sendable (Element) -> T?) async throws -> T {
        try await nextMatch(queue, timeout: timeout, match)
    }

    /// Checks `condition`, polling it for a few milliseconds of real time so that tasks woken by
    /// the last step of virtual time can act.
    private func settled(_ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(20)
        repeat {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(1))
        } while ContinuousClock.now < deadline
        return false
    }

    static func amount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return .nanoseconds(overflow ? .max : nanoseconds &+ attoseconds / 1_000_000_000)
    }

    // MARK: Lifetime

    /// Runs work for the mesh's lifetime (an application's `run()`); teardown awaits it after
    /// the sessions stop.
    /// - Parameter work: the work.
    public func spawn(_ work: @escaping @Sendable () async -> Void) {
        let task = Task { await work() }
        tasks.withLockedValue { $0.append(task) }
    }

    /// Every node's logs, one block per node.
    public var logs: String {
        nodes.withLockedValue { $0 }.map { node in
            "--- \(node) (\(node.peer.id.shortHex))\n" + node.logs.all.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Shut-down loops, kept for the life of the process: a straggling task may still touch one
    /// from another thread after the teardown, and what it leaves (a timer inserted late, a
    /// promise whose completion hop the closed loop dropped) would trap in a debug build when the
    /// loop is freed (NIO checks that a freed testing loop has no open promise or task).
    private static let retired = NIOLockedValueBox<[NIOAsyncTestingEventLoop]>([])

    func shutdown() async {
        for node in nodes.withLockedValue({ $0 }) { await node.session.disconnect() }
        for runner in runners.withLockedValue({ $0 }) { await runner.value }
        for task in tasks.withLockedValue({ $0 }) {
            task.cancel()
            await task.value
        }
        // Hops onto the loop still queued (a promise completed from another thread) run first: a
        // loop that is shutting down drops them, and their promises would leak.
        await loop.run()
        // Then fails every timer still scheduled (keepalives, a sleeper's wait): what waits on one
        // wakes with an error, and the loop holds nothing more. Nothing can hop onto it from now
        // on: a future of it awaited from another thread later never completes.
        await loop.shutdownGracefully()
        Self.retired.withLockedValue { $0.append(loop) }
        try? FileManager.default.removeItem(atPath: scratch)
    }
}

/// The next element of an event queue that `match` maps to a value, skipping others, within a
/// real-time bound.
/// - Parameters:
///   - queue: the queue (its only consumer meanwhile).
///   - timeout: the bound.
///   - match: maps the awaited element to a value, others to `nil`.
/// - Returns: the first value.
/// - Throws: ``TestMeshTimeout`` at the bound, or when the queue ends first.
public func nextMatch<Element: Sendable, T: Sendable>(_ queue: EventQueue<Element>, timeout: Duration = .seconds(30),
                                                      _ match: @escaping @Sendable (Element) -> T?) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            for await element in queue { if let value = match(element) { return value } }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let value = try await group.next() ?? nil else {
            throw TestMeshTimeout(description: "no matching event within \(timeout)")
        }
        return value
    }
}

/// A ``TestMesh`` wait that ran out of time.
public struct TestMeshTimeout: Error, CustomStringConvertible {
    /// What did not happen.
    public let description: String
}

/// Runs `body` on a new ``TestMesh`` and tears the mesh down afterwards, also when `body` throws
/// (a failed `#require`, a wait that timed out); then every node's captured logs are printed.
/// Set `MESHCHAT_TEST_LOGS=1` to print them after every test.
/// - Parameter body: the test.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws.
public func withTestMesh<T>(_ body: (TestMesh) async throws -> T) async throws -> T {
    let mesh = try TestMesh()
    do {
        let result = try await body(mesh)
        if ProcessInfo.processInfo.environment["MESHCHAT_TEST_LOGS"] == "1" { print(mesh.logs) }
        await mesh.shutdown()
        return result
    } catch {
        print("test mesh failed: \(error)\n\(mesh.logs)")
        await mesh.shutdown()
        throw error
    }
}
