import ArgumentParser
import Foundation
import MeshSession

/// What ``RelayPingCommand`` measured: round trips to the neighbour B and, through B, to C.
struct RelayPingResult: Codable {
    /// Round trips per target.
    var count: Int
    /// A→B→A, µs.
    var directP50: Double
    var directP99: Double
    /// A→B→C→B→A, sealed end to end, µs.
    var relayedP50: Double
    var relayedP99: Double
    /// A→B→C→D→C→B→A, sealed end to end, µs.
    var farP50: Double
    var farP99: Double
}

/// `meshbench mesh-ping`: node A of the line A—B—C—D. It dials B, waits until C and D are reachable
/// at two and three hops, then takes turns sending 64-byte pings to B (a direct link), C (through B)
/// and D (through B and C), sealed end to end beyond B; the `meshbench sink` processes echo them
/// the same way. Prints one JSON line.
struct RelayPingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mesh-ping", abstract: "Node A of a relay line: pings B and C (prints one JSON result).",
        shouldDisplay: false)

    @Option(help: "B's port on 127.0.0.1.") var connect: Int
    @Option(help: "Round trips per target.") var count = 5000
    @Option(help: "Unmeasured round trips per target first.") var warmup = 500

    func run() async throws {
        let result = try await MeshWorkloads.dialling(name: "ping-a", port: connect,
                                                      watchdog: .seconds(60) + .milliseconds(count + warmup) * 4) { session in
            var events = session.events.makeAsyncIterator()
            let found = try await MeshWorkloads.peersByHops(&events, hops: 3, command: "mesh-ping")
            let (b, c, d) = (found[0], found[1], found[2])
            let maker = PayloadMaker(size: 64)
            var sequence = 0

            // Each ping is distinct and only its own echo ends the round trip. A ping is sent
            // again every second until its echo comes: a node that has just become reachable may
            // not yet know this node's signed prekey, and cannot seal its echo (§19.6), so the
            // first pings of a run can be lost; a stale echo of an earlier copy is skipped.
            func roundTrip(_ target: PeerID) async throws -> Double {
                sequence += 1
                let ping = maker.data(sequence, kind: .ping)
                let t0 = monotonicSeconds()
                try await session.send(ping, to: [target], mode: .reliable)
                let again = Task {
                    while (try? await Task.sleep(for: .seconds(1))) != nil {
                        try? await session.send(ping, to: [target], mode: .reliable)
                    }
                }
                defer { again.cancel() }
                while let event = await events.next() {
                    if case .received(let message) = event, message.sender == target,
                       case .data(let data) = message.content, data == ping {
                        return (monotonicSeconds() - t0) * 1e6
                    }
                }
                throw ValidationError("mesh-ping: events ended (the watchdog fired)")
            }

            var samples: [[Double]] = [[], [], []]
            let targets = [b, c, d]
            for i in 0..<(warmup + count) {
                // Rotate the order so no target always goes first.
                for k in 0..<3 {
                    let index = (i + k) % 3
                    let rtt = try await roundTrip(targets[index])
                    if i >= warmup { samples[index].append(rtt) }
                }
            }
            let (direct, relayed, far) = (samples[0].sorted(), samples[1].sorted(), samples[2].sorted())
            return RelayPingResult(count: count,
                                   directP50: percentile(direct, 0.5), directP99: percentile(direct, 0.99),
                                   relayedP50: percentile(relayed, 0.5), relayedP99: percentile(relayed, 0.99),
                                   farP50: percentile(far, 0.5), farP99: percentile(far, 0.99))
        }
        printJSON(result)
    }
}

/// Figure 1: added round-trip latency per relay traversal, meshchat against a raw TCP relay.
///
/// meshchat: four processes on loopback in a line A—B—C—D (`mesh-ping` — `sink --connect` — …).
/// Per relay traversal: A's round trip to D (relayed by B and C) minus its round trip to C
/// (relayed by B), divided by 2 (a round trip crosses C twice); both are sealed end to end, so
/// the difference is the relay's own cost. The row with C − B also counts sealing and opening.
/// Baseline: `raw-source` (blocking client) to `raw-sink` (echo) through one `raw-relay` and
/// through two chained ones; the same subtraction. Rounds are interleaved; each figure is the
/// median of the rounds' percentiles.
enum RelayLatencyBench {
    /// The options of this figure.
    struct Options: ParsableArguments {
        @Option(name: .customLong("relay-rounds"), help: "Rounds of the relay-latency figure (median reported).") var rounds = 3
        @Option(name: .customLong("relay-count"), help: "64-byte round trips per target per round.") var count = 5000
    }

    /// What one round measured, µs.
    struct Round {
        var meshDirect: (Double, Double)
        var meshRelayed: (Double, Double)
        var meshFar: (Double, Double)
        var rawDirect: (Double, Double)
        var rawRelayed: (Double, Double)
        var rawFar: (Double, Double)
    }

    /// Runs the figure.
    /// - Returns: the table rows and the raw-TCP direct p50 round trip (µs), for other figures.
    static func run(_ options: Options) async throws -> (rows: [MeshRow], rawRoundTrip: Double) {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let rawEcho = try Child.start(me, ["raw-sink"])
        defer { rawEcho.stop() }
        let echoPort = try rawEcho.readPort()
        let rawRelay = try Child.start(me, ["raw-relay", "--to", "\(echoPort)"])
        defer { rawRelay.stop() }
        let relayPort = try rawRelay.readPort()
        let rawRelay2 = try Child.start(me, ["raw-relay", "--to", "\(relayPort)"])
        defer { rawRelay2.stop() }
        let relay2Port = try rawRelay2.readPort()
        let (sinks, bPort) = try startMeshLine(me)
        defer { for sink in sinks { sink.stop() } }

        var rounds: [Round] = []
        for round in 1...options.rounds {
            progress("mesh relay latency: round \(round) of \(options.rounds)")
            let rawDirect = try rawLatency(me, port: echoPort, count: options.count)
            let rawRelayed = try rawLatency(me, port: relayPort, count: options.count)
            let rawFar = try rawLatency(me, port: relay2Port, count: options.count)
            let mesh = try meshPing(me, port: bPort, count: options.count)
            rounds.append(Round(meshDirect: (mesh.directP50, mesh.directP99), meshRelayed: (mesh.relayedP50, mesh.relayedP99),
                                meshFar: (mesh.farP50, mesh.farP99),
                                rawDirect: rawDirect, rawRelayed: rawRelayed, rawFar: rawFar))
        }
        func med(_ pick: (Round) -> Double) -> Double { median(rounds.map(pick)) }
        let n = "median of \(options.rounds) rounds × \(options.count)"
        let rows = [
            MeshRow("direct round trip A→B→A, p50 (\(n))", "µs", med { $0.meshDirect.0 }, med { $0.rawDirect.0 }),
            MeshRow("direct round trip A→B→A, p99", "µs", med { $0.meshDirect.1 }, med { $0.rawDirect.1 }),
            MeshRow("relayed round trip A→B→C→B→A, p50", "µs", med { $0.meshRelayed.0 }, med { $0.rawRelayed.0 }),
            MeshRow("relayed round trip A→B→C→B→A, p99", "µs", med { $0.meshRelayed.1 }, med { $0.rawRelayed.1 }),
            MeshRow("2-relay round trip A→B→C→D→C→B→A, p50", "µs", med { $0.meshFar.0 }, med { $0.rawFar.0 }),
            MeshRow("2-relay round trip, p99", "µs", med { $0.meshFar.1 }, med { $0.rawFar.1 }),
            MeshRow("added latency per relay traversal, p50 ((2-relay − 1-relay) / 2)", "µs",
                    med { ($0.meshFar.0 - $0.meshRelayed.0) / 2 }, med { ($0.rawFar.0 - $0.rawRelayed.0) / 2 }),
            MeshRow("added latency per relay traversal, p99", "µs",
                    med { ($0.meshFar.1 - $0.meshRelayed.1) / 2 }, med { ($0.rawFar.1 - $0.rawRelayed.1) / 2 }),
            MeshRow("first relay incl. end-to-end sealing, p50 ((1-relay − direct) / 2)", "µs",
                    med { ($0.meshRelayed.0 - $0.meshDirect.0) / 2 }, med { ($0.rawRelayed.0 - $0.rawDirect.0) / 2 }),
        ]
        return (rows, med { $0.rawDirect.0 })
    }

    /// Starts B, C and D of the line A—B—C—D (`meshbench sink` processes, each dialling the next).
    /// - Returns: the processes (for the caller to stop) and B's port, for `mesh-ping --connect`.
    static func startMeshLine(_ me: String) throws -> (sinks: [Child], bPort: Int) {
        var sinks: [Child] = []
        do {
            var next: Int?
            for _ in 0..<3 {
                let sink = try Child.start(me, ["sink"] + (next.map { ["--connect", "\($0)"] } ?? []))
                sinks.append(sink)
                next = try sink.readPort()
            }
            guard let port = next else { throw ValidationError("mesh line: no sink started") }
            return (sinks, port)
        } catch {
            for sink in sinks { sink.stop() }
            throw error
        }
    }

    /// One `mesh-ping` run as node A against B's port.
    static func meshPing(_ me: String, port: Int, count: Int) throws -> RelayPingResult {
        let ping = try Child.start(me, ["mesh-ping", "--connect", "\(port)", "--count", "\(count)"])
        let line = try ping.readLine()
        ping.process.waitUntilExit()
        return try JSONDecoder().decode(RelayPingResult.self, from: Data(line.utf8))
    }

    /// One `raw-source --workload latency` run; (p50, p99) in µs.
    static func rawLatency(_ me: String, port: Int, count: Int) throws -> (Double, Double) {
        let child = try Child.start(me, ["raw-source", "--port", "\(port)", "--workload", "latency", "--count", "\(count)", "--size", "64"])
        let line = try child.readLine()
        child.process.waitUntilExit()
        let result = try JSONDecoder().decode(SourceResult.self, from: Data(line.utf8))
        return (result.p50Microseconds ?? 0, result.p99Microseconds ?? 0)
    }
}
