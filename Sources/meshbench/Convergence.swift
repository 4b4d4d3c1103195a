import ArgumentParser
import Foundation
import MeshLink
import MeshSession
import MeshRouting
import MeshTestSupport
import MeshWire

#if canImport(Glibc)
import Glibc
#endif

/// Figure 3: how long after a link break every node of a line of real sessions knows that the
/// far half is unreachable (``SessionEvent/reachabilityChanged(_:_:)`` with `nil`).
///
/// - **Break**: `nodes` sessions in this process, linked in a line on loopback; the middle link is
///   closed from one end (``Session/disconnect(_:)``, with a goodbye). Then it is re-linked, and
///   after full reachability and a 200 ms pause (past the 50 ms advert rate limit) the next round.
/// - **Kill / freeze**: the middle node is a `meshbench sink` child process; it gets SIGKILL (the
///   kernel closes its sockets, so its neighbours see the links end at once) or SIGSTOP (a frozen
///   node: its sockets stay open and only the keepalive can tell, after ``Liveness`` `deadAfter`).
///   Measured until every in-process node has lost the dead node and the far half.
///
/// Baseline: the same pure routers on ``RouterFabric`` with every link's delay set to the raw-TCP
/// one-way latency measured in this run (half the raw ping-pong p50): the convergence the
/// protocol's message exchange allows with no crypto, no event loops and no scheduling.
enum ConvergenceBench {
    /// The options of this figure.
    struct Options: ParsableArguments {
        @Option(name: .customLong("line-nodes"), help: "Sessions in the convergence line.") var nodes = 10
        @Option(name: .customLong("break-rounds"), help: "Link breaks measured (median and max reported).") var rounds = 5
        @Option(name: .customLong("kill-rounds"), help: "Middle-node kills and freezes measured (0: skip them).") var killRounds = 3
    }

    /// Runs the figure.
    /// - Parameters:
    ///   - options: the options.
    ///   - rawRoundTrip: the raw-TCP 64-byte ping-pong p50 (µs) measured in this run, or `nil` to measure it now.
    static func run(_ options: Options, rawRoundTrip: Double?) async throws -> MeshTable {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let roundTrip = try rawRoundTrip ?? measureRawRoundTrip(me)
        let oneWay = Duration.nanoseconds(Int64(roundTrip * 500))
        let n = options.nodes
        let mid = n / 2 - 1
        let fabricBreak = seconds(fabricConvergence(nodes: n, linkDelay: oneWay, cut: [(mid, mid + 1)]))
        let fabricKill = seconds(fabricConvergence(nodes: n, linkDelay: oneWay, cut: [(mid, mid + 1), (mid + 1, mid + 2)]))
        let fabricMillisecond = seconds(fabricConvergence(nodes: n, linkDelay: .milliseconds(1), cut: [(mid, mid + 1)]))

        let breaks = try await breakLine(nodes: n, rounds: options.rounds)
        var rows = [
            MeshRow("link break (disconnect), median of \(breaks.count)", "ms", median(breaks) * 1000, fabricBreak * 1000, goal: "≤ 2000 ms"),
            MeshRow("link break (disconnect), max", "ms", breaks.max().map { $0 * 1000 }, fabricBreak * 1000, goal: "≤ 2000 ms"),
        ]
        var notes = [
            "\(n) real Sessions in one process on 127.0.0.1 in a line; the link \(mid)—\(mid + 1) is broken. Measured from the "
                + "disconnect call to the reachabilityChanged(nil) event that completed the picture at the last node.",
            "Baseline: RouterFabric (pure MeshRouting routers, virtual time) on the same line with link delay = raw TCP "
                + String(format: "one-way latency %.1f µs (raw ping-pong p50 / 2, this run). ", roundTrip / 2)
                + String(format: "With 1 ms links the fabric takes %.1f ms (PROTOCOL.md §13.2.9 says 4 ms).", fabricMillisecond * 1000),
            "Break runs (ms): " + breaks.map { String(format: "%.2f", $0 * 1000) }.joined(separator: " "),
        ]
        if options.killRounds > 0 {
            let kills = try await killMiddle(me, nodes: n, rounds: options.killRounds, signal: SIGKILL)
            let freezes = try await killMiddle(me, nodes: n, rounds: options.killRounds, signal: SIGSTOP)
            let deadAfter = Double(Liveness.defaultDeadAfter) / 1e9
            rows.append(MeshRow("middle node's process killed (SIGKILL), median of \(kills.count)", "ms",
                                median(kills) * 1000, fabricKill * 1000, goal: "≤ 2000 ms"))
            rows.append(MeshRow("middle node frozen (SIGSTOP: keepalive), median of \(freezes.count)", "ms",
                                median(freezes) * 1000, deadAfter * 1000, goal: "bounded by the keepalive"))
            notes.append("Kill/freeze: the middle node is a separate `meshbench sink` process linked to both neighbours; the "
                         + "other \(n - 1) sessions are in this process. SIGKILL closes its sockets, so the neighbours see the links "
                         + "end at once (baseline: the fabric with both links cut). SIGSTOP leaves them open: only the keepalive "
                         + String(format: "(ping after %.0f s idle, dead after %.0f s of silence, checked every %.2f s) detects it; ",
                                  Double(Liveness.defaultPingInterval) / 1e9, deadAfter, Double(Liveness.checkInterval) / 1e9)
                         + "its baseline is that 3 s bound itself, not a measurement. A host that vanishes (power, cable) is the SIGSTOP case.")
            notes.append("Kill runs (ms): " + kills.map { String(format: "%.1f", $0 * 1000) }.joined(separator: " ")
                         + "; freeze runs (ms): " + freezes.map { String(format: "%.0f", $0 * 1000) }.joined(separator: " "))
        }
        return MeshTable(title: "Route convergence after a link break, \(n)-node line", subject: "meshchat sessions",
                         baselineName: "pure routers, raw-TCP link delay", rows: rows, notes: notes)
    }

    /// Breaks the middle link of a line of in-process sessions `rounds` times.
    /// - Returns: seconds from each break to the last node's matching event.
    static func breakLine(nodes n: Int, rounds: Int) async throws -> [Double] {
        try await LoopbackMesh.with(count: n, name: "line") { mesh in
            for i in 0..<(n - 1) { mesh.link(i, i + 1) }
            try await mesh.waitFullyReachable()
            let mid = n / 2 - 1
            let left = Array(0...mid)
            let right = Array((mid + 1)..<n)
            let leftIDs = Set(left.map { mesh.ids[$0] })
            let rightIDs = Set(right.map { mesh.ids[$0] })
            var times: [Double] = []
            for round in 1...rounds {
                progress("convergence: link break \(round) of \(rounds)")
                try await Task.sleep(for: .milliseconds(200))  // pacing past the advert rate limit
                let start = ContinuousClock.now
                mesh.unlink(mid, mid + 1)
                let end = try await mesh.reachability.wait(for: "the line's halves losing each other", timeout: .seconds(10)) {
                    $0.none(left, reach: rightIDs) && $0.none(right, reach: leftIDs)
                }
                times.append(seconds(end - start))
                mesh.link(mid, mid + 1)
                try await mesh.waitFullyReachable()
            }
            return times
        }
    }

    /// A line whose middle node is a child process, killed or frozen with `signal` each round.
    /// - Returns: seconds from the signal to the last in-process node's matching event.
    static func killMiddle(_ me: String, nodes n: Int, rounds: Int, signal: Int32) async throws -> [Double] {
        // In-process index i is line position i up to `mid`, i + 1 after it; the child is at mid + 1.
        let mid = n / 2 - 1
        return try await LoopbackMesh.with(count: n - 1, name: "kill") { mesh in
            for i in 0..<(n - 2) where i != mid { mesh.link(i, i + 1) }
            let everyone = Array(0..<(n - 1))
            let left = Array(0...mid)
            let right = Array((mid + 1)..<(n - 1))
            var times: [Double] = []
            for round in 1...rounds {
                progress("convergence: middle node \(signal == SIGKILL ? "killed" : "frozen") \(round) of \(rounds)")
                let child = try Child.start(me, ["sink"])
                defer {
                    kill(child.process.processIdentifier, SIGKILL)
                    child.stop()
                }
                let port = try child.readPort()
                mesh.sessions[mid].connect(host: "127.0.0.1", port: port)
                mesh.sessions[mid + 1].connect(host: "127.0.0.1", port: port)
                let ids = Set(mesh.ids)
                let selves = mesh.ids
                try await mesh.reachability.wait(for: "every node reaching the child and each other", timeout: .seconds(30)) { state in
                    state.all(everyone, reach: ids, selves: selves) && state.reachable.allSatisfy { $0.count == n - 1 }
                }
                guard let childID = mesh.reachability.read({ $0.reachable[0].subtracting(ids).first }) else {
                    throw DeadlineExceeded(description: "the child's node id never appeared")
                }
                let leftIDs = Set(left.map { mesh.ids[$0] }).union([childID])
                let rightIDs = Set(right.map { mesh.ids[$0] }).union([childID])
                try await Task.sleep(for: .milliseconds(200))  // pacing past the advert rate limit
                let start = ContinuousClock.now
                kill(child.process.processIdentifier, signal)
                let end = try await mesh.reachability.wait(for: "the line losing the dead node and the far half", timeout: .seconds(20)) {
                    $0.none(left, reach: rightIDs) && $0.none(right, reach: leftIDs)
                }
                times.append(seconds(end - start))
            }
            return times
        }
    }

    /// Virtual time from cutting `cut` on a converged line of pure routers to the last
    /// reachability change.
    static func fabricConvergence(nodes: Int, linkDelay: Duration, cut: [(Int, Int)]) -> Duration {
        var fabric = RouterFabric(count: nodes, linkDelay: linkDelay)
        for i in 0..<(nodes - 1) { fabric.connect(i, i + 1) }
        fabric.settle()
        fabric.run(for: .seconds(2))
        let broken = fabric.now
        for (a, b) in cut { fabric.disconnect(a, b) }
        fabric.settle()
        let last = fabric.lastReachabilityChange.compactMap { $0 }.max() ?? broken
        return last - broken
    }

    /// The raw-TCP 64-byte ping-pong p50 (µs): `raw-source` against `raw-sink`, 2000 round trips.
    static func measureRawRoundTrip(_ me: String) throws -> Double {
        let echo = try Child.start(me, ["raw-sink"])
        defer { echo.stop() }
        return try RelayLatencyBench.rawLatency(me, port: try echo.readPort(), count: 2000).0
    }
}
