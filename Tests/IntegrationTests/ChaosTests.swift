import Foundation
import MeshTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Faults on namespace hosts (scripts/netns-hosts), chosen by a seeded generator: kill -9 and a
/// restart on the same port, a link down and up, SIGSTOP/SIGCONT, avahi-daemon restarts. Every
/// node keeps its neighbours by address (`--connect`, redialled) and finds them by discovery.
/// Private lines are sent during each fault; after it is undone every accepted line must be
/// printed exactly once by its destination (over all its incarnations) and its receipt must be
/// back within 10 s. `MESHCHAT_CHAOS_SEED` replays a run; the seed is in every failure message.
/// Needs root; where it cannot run, it fails rather than skips (CI runs as root).
@Suite("chaos on namespace hosts", .serialized)
struct ChaosTests {
    /// The port every node listens on (each host has its own port space).
    static let port = 7000
    /// Faults per topology: with the sends and heals about a minute per topology.
    static let faults = 5
    /// How long after a fault is undone every receipt must be back.
    static let receiptDeadline = Duration.seconds(10)

    enum Fault: CaseIterable { case kill, flap, stop, avahi }

    /// One chat on one host, over its restarts.
    final class Node: @unchecked Sendable {
        let name: String
        let host: String
        let arguments: [String]
        var incarnations: [ChatProcess] = []
        var current: ChatProcess { incarnations[incarnations.count - 1] }

        init(name: String, host: String, arguments: [String]) {
            self.name = name
            self.host = host
            self.arguments = arguments
        }

        func start(prefix: String) async throws {
            let process = try ChatProcess(arguments, label: name, environment: ["MESHCHAT_NETNS_PREFIX": prefix],
                                          launcher: ["scripts/netns-hosts", "exec", host])
            incarnations.append(process)
            try await process.waitForEvent("\"event\":\"ready\"")
        }

        /// Every stdout line of every incarnation.
        var output: [String] { incarnations.flatMap(\.output) }
    }

    /// A line accepted by its sender.
    struct Line {
        let id: String
        let text: String
        let from: Node
        let to: Node
    }

    static var seed: UInt64 {
        if let text = ProcessInfo.processInfo.environment["MESHCHAT_CHAOS_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 1...UInt64(UInt32.max))
    }

    @Test("a line A (IPv4 only)—B—C (IPv6 only): kill -9, link flaps, SIGSTOP, avahi-daemon restarts; no line lost or doubled, receipts within 10 s", .timeLimit(.minutes(6)))
    func line() async throws {
        try await run(topology: "A-B B-C", prefix: "hch\(getpid() % 10000)l-", ipv4Only: "A", ipv6Only: "C")
    }

    @Test("a ring A—B—C—A: the same faults; no line lost or doubled, receipts within 10 s", .timeLimit(.minutes(6)))
    func ring() async throws {
        try await run(topology: "A-B B-C C-A", prefix: "hch\(getpid() % 10000)r-")
    }

    func run(topology: String, prefix: String, ipv4Only: String = "", ipv6Only: String = "") async throws {
        try #require(geteuid() == 0, "network-namespace hosts need root (CI runs as root): run scripts/test as root")
        let seed = Self.seed
        let tag = "chaos \(topology), seed \(seed) (replay: MESHCHAT_CHAOS_SEED=\(seed))"
        print("\(tag): starting")
        var generator = SplitMix64(seed: seed)
        let script = ChatProcess.packageRoot.appendingPathComponent("scripts/netns-hosts").path
        let up = try Command.run([script, "up", topology], environment: [
            "MESHCHAT_NETNS_PREFIX": prefix, "MESHCHAT_NETNS_IPV6": "1",
            "MESHCHAT_NETNS_IPV4_ONLY": ipv4Only, "MESHCHAT_NETNS_IPV6_ONLY": ipv6Only])
        try #require(up.status == 0, "\(up.output)")
        let directory = TemporaryDirectory()
        let service = DiscoveryTests.uniqueService()
        // Link N joins its first host (10.99.N.1, or fd99:N::1 beside an IPv6-only host) and its
        // second (10.99.N.2, fd99:N::2), as netns-hosts numbers them.
        let links = topology.split(separator: " ").map { $0.split(separator: "-").map(String.init) }
        let hostNames = ["A": "alice", "B": "bob", "C": "carol"]
        var nodes: [Node] = []
        for host in ["A", "B", "C"] {
            var arguments = ["--name", hostNames[host]!, "--json", "--service", service, "--port", "\(Self.port)",
                             "--data-dir", directory.appending(host)]
            for (index, link) in links.enumerated() where link[0] == host {
                let ipv6 = ipv6Only.split(separator: " ").contains { link.contains(String($0)) }
                arguments += ["--connect", ipv6 ? "[fd99:\(index + 1)::2]:\(Self.port)" : "10.99.\(index + 1).2:\(Self.port)"]
            }
            nodes.append(Node(name: hostNames[host]!, host: host, arguments: arguments))
        }
        defer {
            for node in nodes {
                node.incarnations.last?.signal(SIGCONT)
                node.incarnations.last?.kill9()
            }
            _ = try? MultiHostTests.hosts(["down"], prefix: prefix)
        }
        for node in nodes { try await node.start(prefix: prefix) }
        try await waitForMesh(nodes, tag: tag)

        var lines: [Line] = []
        var counter = 0
        for step in 1...Self.faults {
            let fault = Fault.allCases[Int(generator.next() % UInt64(Fault.allCases.count))]
            let victim = nodes[Int(generator.next() % UInt64(nodes.count))]
            let link = links[Int(generator.next() % UInt64(links.count))]
            let what = "step \(step): \(fault) \(fault == .flap ? link.joined(separator: "-") : victim.name)"
            print("\(tag): \(what)")
            let senders: [Node]
            switch fault {
            case .kill:
                // A line accepted just before the kill is on disk: it goes out after the restart.
                if let destination = nodes.first(where: { $0 !== victim }) {
                    counter += 1
                    let text = "chaos line \(counter) \(victim.name)→\(destination.name) before the kill"
                    let mark = victim.current.output.count
                    victim.current.send("/msg @\(destination.name) \(text)")
                    let sent = try await victim.current.waitForLine(from: mark) { $0.contains("\"event\":\"sent\"") && $0.contains(text) }
                    lines.append(Line(id: try #require(JSONLine(sent)?.string("id")), text: text, from: victim, to: destination))
                }
                victim.current.kill9()
                _ = try await victim.current.waitForExit()
                senders = nodes.filter { $0 !== victim }
            case .flap:
                // Down until the link's ends give up on each other (keepalive), so that it heals.
                let ends = nodes.filter { link.contains($0.host) }
                try await Self.waitForLink(ends[0], ends[1])
                let mark = ends[0].current.output.count
                try MultiHostTests.hosts(["link-down", link[0], link[1]], prefix: prefix)
                try await ends[0].current.waitForLine(from: mark) {
                    $0.contains("\"event\":\"peer\"") && $0.contains("\"name\":\"\(ends[1].name)\"") && $0.contains("\"state\":\"notConnected\"")
                }
                senders = nodes
            case .stop:
                // Stopped until a neighbour gives up on it (keepalive).
                let watcher = nodes.first { $0 !== victim }!
                let mark = watcher.current.output.count
                victim.current.signal(SIGSTOP)
                try await watcher.current.waitForLine(from: mark) {
                    $0.contains("\"event\":\"unreachable\"") && $0.contains("\"name\":\"\(victim.name)\"")
                }
                senders = nodes.filter { $0 !== victim }
            case .avahi:
                try MultiHostTests.hosts(["avahi-stop", victim.host], prefix: prefix)
                senders = nodes
            }
            // Lines sent while the fault lasts: every sender to every other node.
            var sentNow: [Line] = []
            for sender in senders {
                for destination in nodes where destination !== sender {
                    counter += 1
                    let text = "chaos line \(counter) \(sender.name)→\(destination.name)"
                    let mark = sender.current.output.count
                    sender.current.send("/msg @\(destination.name) \(text)")
                    let sent = try await sender.current.waitForLine(from: mark) { $0.contains("\"event\":\"sent\"") && $0.contains(text) }
                    let id = try #require(JSONLine(sent)?.string("id"), "\(tag) \(what): \(sent)")
                    sentNow.append(Line(id: id, text: text, from: sender, to: destination))
                }
            }
            lines += sentNow
            // Undo the fault.
            switch fault {
            case .kill: try await victim.start(prefix: prefix)
            case .flap: try MultiHostTests.hosts(["link-up", link[0], link[1]], prefix: prefix)
            case .stop: victim.current.signal(SIGCONT)
            case .avahi: try MultiHostTests.hosts(["avahi-start", victim.host], prefix: prefix)
            }
            let healed = ContinuousClock.now
            for line in lines {
                let remaining = Self.receiptDeadline - (ContinuousClock.now - healed)
                do {
                    try await line.from.current.waitForLine(timeout: max(remaining, .milliseconds(1))) {
                        $0.contains("\"event\":\"receipt\"") && $0.contains(line.id) && $0.contains("\"status\":\"delivered\"")
                    }
                } catch {
                    // The receipt may have reached an earlier incarnation of the sender, or been
                    // stored by one that was killed before it could print it: its history says so.
                    let earlier = line.from.output.contains { $0.contains("\"event\":\"receipt\"") && $0.contains(line.id) }
                    let stored = earlier ? true : try await Self.isDelivered(line.id, at: line.from)
                    #expect(stored, "\(tag) \(what): no receipt for \"\(line.text)\" within \(Self.receiptDeadline) of the heal; \(Self.trace(line, nodes))")
                }
            }
        }
        // Exactly once: every accepted line printed once by its destination, over its incarnations.
        for node in nodes {
            let received = node.output.compactMap { line -> String? in
                guard line.contains("\"event\":\"message\""), line.contains("\"private\":true") else { return nil }
                return JSONLine(line)?.string("id")
            }
            for line in lines where line.to === node {
                let count = received.filter { $0 == line.id }.count
                #expect(count == 1, "\(tag): \"\(line.text)\" printed \(count) times by \(node.name)")
            }
        }
        // avahi-daemon restarts are no reason to say that it is not running.
        for node in nodes {
            for process in node.incarnations {
                #expect(!process.errors.contains("not running") && !process.output.joined().contains("not running"),
                        "\(tag): \(node.name) said the daemon is not running")
            }
        }
        for node in nodes { node.current.closeInput() }
        for node in nodes { _ = try? await node.current.waitForExit() }
    }

    /// Whether the sender's store has the line as delivered (`/history`).
    static func isDelivered(_ id: String, at node: Node) async throws -> Bool {
        let mark = node.current.output.count
        node.current.send("/history 1000")
        let history = try await node.current.waitForLine(from: mark) { $0.contains("\"event\":\"history\"") }
        let messages = JSONLine(history)?.object["messages"] as? [[String: Any]] ?? []
        return messages.contains { $0["id"] as? String == id && $0["status"] as? String == "delivered" }
    }

    /// What each node printed about a line, and its stderr's end, for a failure message.
    static func trace(_ line: Line, _ nodes: [Node]) -> String {
        nodes.map { node in
            let lines = node.incarnations.enumerated().map { index, process in
                "  \(node.name)#\(index): " + process.output.filter { $0.contains(line.id) }.joined(separator: "\n    ")
                    + "\n    stderr: " + String(process.errors.suffix(600))
            }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Waits until `node` has a link of its own to `other` (its latest peer event for it says
    /// connected), so that cutting their link cuts a link.
    static func waitForLink(_ node: Node, _ other: Node) async throws {
        let process = node.current
        let mark = process.output.count
        let isPeerEvent: @Sendable (String) -> Bool = { $0.contains("\"event\":\"peer\"") && $0.contains("\"name\":\"\(other.name)\"") }
        if let last = process.output[..<mark].last(where: isPeerEvent), last.contains("\"state\":\"connected\"") { return }
        try await process.waitForLine(timeout: .seconds(40), from: mark) { isPeerEvent($0) && $0.contains("\"state\":\"connected\"") }
    }

    /// Waits until every node reaches every other.
    private func waitForMesh(_ nodes: [Node], tag: String) async throws {
        for node in nodes {
            for other in nodes where other !== node {
                try await node.current.waitForEvent("\"event\":\"reachable\"", "\"name\":\"\(other.name)\"", timeout: .seconds(40))
            }
        }
    }
}
