import Foundation
import MeshSession
import MeshWire

/// What the event pumps of a ``LoopbackMesh`` know: per node, the nodes it can reach.
struct Reachability: Sendable {
    /// Per node index: the node ids it has a route to (``SessionEvent/reachabilityChanged(_:_:)``).
    var reachable: [Set<NodeID>]
    /// Per node index: the peers connected to it by a direct link.
    var connected: [Set<NodeID>]

    /// Applies one session event of node `node`.
    mutating func record(_ event: SessionEvent, at node: Int) {
        switch event {
        case .reachabilityChanged(let peer, let route):
            if route != nil { reachable[node].insert(peer.id) } else { reachable[node].remove(peer.id) }
        case .peerChanged(let peer, .connected):
            connected[node].insert(peer.id)
        case .peerChanged(let peer, .notConnected(_)):
            connected[node].remove(peer.id)
        default:
            break
        }
    }

    /// Whether every node of `nodes` reaches every id of `ids` except its own.
    func all(_ nodes: [Int], reach ids: Set<NodeID>, selves: [NodeID]) -> Bool {
        nodes.allSatisfy { ids.subtracting([selves[$0]]).isSubset(of: reachable[$0]) }
    }

    /// Whether no node of `nodes` reaches any id of `ids`.
    func none(_ nodes: [Int], reach ids: Set<NodeID>) -> Bool {
        nodes.allSatisfy { reachable[$0].isDisjoint(with: ids) }
    }
}

/// Real meshchat ``Session``s in this process on 127.0.0.1, linked by explicit
/// ``Session/connect(host:port:)`` calls, each with a task consuming its events.
///
/// Made and torn down by ``with(count:name:consumer:body:)``, which runs every session, its
/// consumer and the body in one task group and disconnects everything when the body ends.
/// This type is thread-safe (its stored properties are immutable; the watch has a lock).
final class LoopbackMesh: Sendable {
    /// The sessions, by node index.
    let sessions: [Session]
    /// Their TCP ports.
    let ports: [Int]
    /// Their peer ids.
    let peers: [PeerID]
    /// Reachability as the sessions reported it (updated by the consumers).
    let reachability: Watch<Reachability>
    /// The node ids, by node index.
    var ids: [NodeID] { peers.map(\.id) }

    private init(sessions: [Session], ports: [Int]) {
        self.sessions = sessions
        self.ports = ports
        self.peers = sessions.map(\.peer.peerID)
        let empty = Array(repeating: Set<NodeID>(), count: sessions.count)
        self.reachability = Watch(Reachability(reachable: empty, connected: empty))
    }

    /// What consumes one node's session events; it must call ``record(_:at:)`` for each.
    typealias Consumer = @Sendable (LoopbackMesh, Int) async -> Void

    /// The default consumer: records each session event and nothing else.
    static let recordOnly: Consumer = { mesh, node in
        for await event in mesh.sessions[node].events { mesh.record(event, at: node) }
    }

    /// Records one node's session event.
    func record(_ event: SessionEvent, at node: Int) {
        reachability.update { $0.record(event, at: node) }
    }

    /// Makes `count` sessions, runs them with their consumers, runs `body`, then stops them all.
    /// - Parameters:
    ///   - count: the number of sessions.
    ///   - name: a prefix for their names and data directories.
    ///   - consumer: consumes each node's events.
    ///   - body: the benchmark.
    /// - Returns: what `body` returned.
    static func with<T: Sendable>(count: Int, name: String, consumer: @escaping Consumer = recordOnly,
                                  body: @Sendable (LoopbackMesh) async throws -> T) async throws -> T {
        var sessions: [Session] = []
        var ports: [Int] = []
        for i in 0..<count {
            let session = try MeshWorkloads.makeSession(name: "\(name)-\(i)", port: 0)
            ports.append(try await session.start())
            sessions.append(session)
        }
        let mesh = LoopbackMesh(sessions: sessions, ports: ports)
        defer { mesh.removeDataDirectories(name: name) }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            for i in 0..<count {
                group.addTask { try await mesh.sessions[i].run(); return nil }
                group.addTask { await consumer(mesh, i); return nil }
            }
            let result: T
            do {
                result = try await body(mesh)
            } catch {
                for session in mesh.sessions { await session.disconnect() }
                throw error
            }
            for session in mesh.sessions { await session.disconnect() }
            while try await group.next() != nil {}
            return result
        }
    }

    /// Opens a link: node `a` dials node `b`.
    func link(_ a: Int, _ b: Int) {
        sessions[a].connect(host: "127.0.0.1", port: ports[b])
    }

    /// Closes the link between `a` and `b` from `a`'s end, with a goodbye.
    func unlink(_ a: Int, _ b: Int) {
        sessions[a].disconnect(peers[b])
    }

    /// Waits until every node reaches every other one.
    /// - Parameter timeout: the deadline.
    func waitFullyReachable(timeout: Duration = .seconds(30)) async throws {
        let all = Array(sessions.indices)
        let ids = Set(self.ids)
        let selves = self.ids
        try await reachability.wait(for: "every node reaching every other", timeout: timeout) {
            $0.all(all, reach: ids, selves: selves)
        }
    }

    private func removeDataDirectories(name: String) {
        for i in sessions.indices {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("meshbench-\(name)-\(i)-\(getpid())")
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
