import Foundation
import MeshLink
import MeshSession
import MeshTestSupport
import Synchronization

/// A session on loopback with its event stream read by the test.
final class Peer: Sendable {
    let session: Session
    let port: Int
    private let runner: Task<Void, Never>

    init(_ name: String) async throws {
        var configuration = Session.Configuration()
        configuration.host = "127.0.0.1"
        session = Session(peer: try LocalPeer(displayName: name, identity: try LocalIdentity.generate()), configuration: configuration)
        port = try await session.start()
        let session = self.session
        runner = Task { try? await session.run() }
    }

    var id: PeerID { session.peer.peerID }

    func stop() async {
        await session.disconnect()
        await runner.value
    }
}

struct Timeout: Error, CustomStringConvertible { var description: String }

/// The next element of an event queue that `match` maps to a value, skipping others; fails at the deadline.
func next<Element: Sendable, T: Sendable>(_ queue: EventQueue<Element>, timeout: Duration = .seconds(10),
                                                 _ match: @escaping @Sendable (Element) -> T?) async throws -> T {
    try await nextMatch(queue, timeout: timeout, match)
}

/// Waits until `condition` holds (bounded polling, for state with no event of its own: a row on
/// disk, a route in a table); fails at the deadline.
func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { throw Timeout(description: "\(what) did not happen within \(timeout)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Lines appended from several tasks, in the order they were appended.
final class Timeline: Sendable {
    private let entries = Mutex<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}
