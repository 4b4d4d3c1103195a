import ArgumentParser
import Foundation
import MeshSession
import MeshTestSupport
import MeshTransport
import MeshWire
import NIOConcurrencyHelpers

/// What ``FloodPingCommand`` measured: round trips to C through B while B may be flooded.
struct FloodPingResult: Codable {
    /// Round trips measured.
    var count: Int
    /// A→B→C→B→A, sealed end to end, µs.
    var p50: Double
    var p99: Double
    /// Honest links lost during the run: A's link to B, or C becoming unreachable (B—C).
    var linksDropped: Int
    /// Measured pings whose echo never came (sealed data has no end-to-end retransmission).
    var lost: Int = 0
    /// Flood packets written per second during the run (filled in by ``FloodBench``).
    var floodRate: Double?
}

/// `meshbench flood-ping`: node A of the line A—B—C. It dials B, prints C's node id as
/// `{"target":"HEX"}` once C is reachable, then sends 64-byte pings to C (through B) one at a time;
/// C (a `meshbench sink`) echoes them. Prints one JSON result; stops early when a link drops.
struct FloodPingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flood-ping", abstract: "Node A of A—B—C: pings C through B (prints C's id, then one JSON result).",
        shouldDisplay: false)

    /// The shortest time from one ping to the next, seconds.
    static let pingInterval = 0.0025

    @Option(help: "B's port on 127.0.0.1.") var connect: Int
    @Option(help: "Round trips measured.") var count = 2000
    @Option(help: "Unmeasured round trips first (the flood starts meanwhile).") var warmup = 300

    func validate() throws {
        guard (1...1_000_000).contains(count) else { throw ValidationError("Please give --count from 1 to 1000000 (got \(count)).") }
        guard (0...1_000_000).contains(warmup) else { throw ValidationError("Please give --warmup from 0 to 1000000 (got \(warmup)).") }
    }

    func run() async throws {
        let result = try await MeshWorkloads.dialling(name: "flood-a", port: connect,
                                                      watchdog: .seconds(120) + .milliseconds(count + warmup) * 10) { session in
            var events = session.events.makeAsyncIterator()
            let found = try await MeshWorkloads.peersByHops(&events, hops: 2, command: "flood-ping")
            let (b, c) = (found[0], found[1])
            printJSON(["target": c.id.hex])
            // Open loop: pings leave every 2.5 ms whatever comes back (a lost ping, which sealed data
            // has no retransmission for, must not stall the measurement); echoes are matched by index.
            let total = warmup + count
            let sentAt = NIOLockedValueBox([Double](repeating: 0, count: total))
            let received = NIOLockedValueBox([Double?](repeating: nil, count: total))
            let dropped = NIOLockedValueBox(0)
            let bID = b.id, cID = c.id
            let reader = Task { [events] in
                var events = events
                while let event = await events.next() {
                    switch event {
                    case .received(let message) where message.sender.id == cID:
                        guard case .data(let data) = message.content, data.count >= 9, data.first == Kind.ping.rawValue else { continue }
                        let index = data.dropFirst().prefix(8).reversed().reduce(0) { $0 << 8 | Int($1) }
                        guard (0..<total).contains(index) else { continue }
                        let now = monotonicSeconds()
                        received.withLockedValue { $0[index] = now - sentAt.withLockedValue { $0[index] } }
                        if received.withLockedValue({ $0.allSatisfy { $0 != nil } }) { return }
                    case .peerChanged(let peer, .notConnected) where peer.id == bID,
                         .reachabilityChanged(let peer, nil) where peer.id == bID || peer.id == cID:
                        // The flooder going out of reach (B closed it) is not an honest link.
                        dropped.withLockedValue { $0 += 1 }
                        return
                    default:
                        continue
                    }
                }
            }
            let maker = PayloadMaker(size: 64)
            let begin = monotonicSeconds()
            for i in 0..<total {
                if dropped.withLockedValue({ $0 }) > 0 { break }
                let due = begin + Double(i) * Self.pingInterval
                let now = monotonicSeconds()
                if due > now { try await Task.sleep(for: .seconds(due - now)) }
                sentAt.withLockedValue { $0[i] = monotonicSeconds() }
                try await session.send(maker.data(i, kind: .ping), to: [c], mode: .reliable)
            }
            // Echoes still on their way get a grace period; what has not come by then is lost.
            let grace = monotonicSeconds() + 2
            while received.withLockedValue({ $0.contains { $0 == nil } }), dropped.withLockedValue({ $0 }) == 0, monotonicSeconds() < grace {
                try await Task.sleep(for: .milliseconds(20))
            }
            reader.cancel()
            let all = received.withLockedValue { $0 }
            var samples = all[warmup...].compactMap { $0 }.map { $0 * 1e6 }
            samples.sort()
            return FloodPingResult(count: samples.count, p50: percentile(samples, 0.5), p99: percentile(samples, 0.99),
                                   linksDropped: dropped.withLockedValue { $0 }, lost: count - samples.count)
        }
        printJSON(result)
    }
}

/// `meshbench flood`: one neighbour floods B at full speed (each ``HostilePeer/Flood``) while A
/// pings C through B (A—B—C, three processes); the honest line's p50/p99 beside the same line
/// without a flood, the honest links B dropped (goal 0) and B's CPU during the run.
struct FloodBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flood", abstract: "Honest latency through a node while one neighbour floods it.")

    @Option(help: "Round trips measured per flood kind.") var count = 2000
    @Option(help: "Rounds (median reported).") var rounds = 1

    func validate() throws {
        guard (1...1_000_000).contains(count) else { throw ValidationError("Please give --count from 1 to 1000000 (got \(count)).") }
        guard (1...100).contains(rounds) else { throw ValidationError("Please give --rounds from 1 to 100 (got \(rounds)).") }
    }
    @Option(name: .customLong("kind"), help: "Only this flood (repeatable): sealedForVictim, sealedRelayed, adverts, inventedNodes.")
    var kinds: [String] = []

    func run() async throws {
        var rows: [MeshRow] = []
        for kind in HostilePeer.Flood.allCases where kinds.isEmpty || kinds.contains(kind.rawValue) {
            var measured: [(FloodPingResult, Double)] = []
            var baseline: [(FloodPingResult, Double)] = []
            for round in 1...rounds {
                progress("flood \(kind): round \(round) of \(rounds)")
                baseline.append(try await Self.phase(nil, count: count))
                measured.append(try await Self.phase(kind, count: count))
            }
            func med(_ runs: [(FloodPingResult, Double)], _ pick: ((FloodPingResult, Double)) -> Double) -> Double { median(runs.map(pick)) }
            rows += [
                MeshRow("\(kind): honest round trip A→B→C→B→A, p50", "µs", med(measured) { $0.0.p50 }, med(baseline) { $0.0.p50 }),
                MeshRow("\(kind): honest round trip, p99", "µs", med(measured) { $0.0.p99 }, med(baseline) { $0.0.p99 }),
                MeshRow("\(kind): honest links dropped", "", med(measured) { Double($0.0.linksDropped) },
                        med(baseline) { Double($0.0.linksDropped) }, goal: "0"),
                MeshRow("\(kind): honest pings lost", "", med(measured) { Double($0.0.lost) }, med(baseline) { Double($0.0.lost) }),
                MeshRow("\(kind): flooded node B's CPU", "%", med(measured) { $0.1 }, med(baseline) { $0.1 }),
                MeshRow("\(kind): flood packets sent to B", "/s", med(measured) { $0.0.floodRate ?? 0 }, nil),
            ]
        }
        MeshTable(
            title: "Honest latency through a flooded node (64-byte round trips on loopback)",
            subject: "with the flood", baselineName: "without", rows: rows,
            notes: [
                "Three processes in a line: `meshbench flood-ping` as A, `meshbench sink --connect C` as B, `meshbench sink` as C. "
                    + "A pings C through B (sealed end to end) every 2.5 ms whatever comes back (open loop, so a lost ping does not stall the run), \(count) measured per run after 300 unmeasured; an echo not back 2 s after the last ping is lost.",
                "The flood: a `HostilePeer` (a real handshake and identity) dials B and sends at full speed for the whole run: "
                    + "sealedForVictim = sealed packets for B that never open; sealedRelayed = sealed packets for C (B relays them); "
                    + "adverts = validly signed adverts of its own, each sequence higher; inventedNodes = validly signed adverts of "
                    + "\(HostilePeer.inventedNodes) invented, reachable nodes, again and again. PROTOCOL.md §13.11 budgets bound each.",
                "CPU: B's user + system time over the run's wall time (100% = one core). Without = the same line, no flooder.",
            ]).print()
    }

    /// One run: B and C, optionally the flood, and A's measurement. Returns A's result and B's CPU %.
    static func phase(_ kind: HostilePeer.Flood?, count: Int) async throws -> (FloodPingResult, Double) {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let c = try Child.start(me, ["sink"])
        defer { c.stop() }
        let b = try Child.start(me, ["sink", "--connect", "\(try c.readPort())"])
        defer { b.stop() }
        let bPort = try b.readPort()
        let a = try Child.start(me, ["flood-ping", "--connect", "\(bPort)", "--count", "\(count)"])
        defer { a.stop() }
        let target = try JSONSerialization.jsonObject(with: Data(try a.readLine().utf8)) as? [String: Any]
        let relayTo = (target?["target"] as? String).flatMap { try? NodeID(hex: $0) }
        // The flooder joins once A has found C (A must not take it for C).
        let mallory: HostilePeer? = kind == nil ? nil : try await HostilePeer(port: bPort)
        let flooding = Task { () -> Int in
            guard let kind, let mallory else { return 0 }
            var sent = 0
            while !Task.isCancelled {
                let part = await mallory.flood(kind, count: 1_000, relayTo: relayTo, start: sent)
                sent += part
                if part < 1_000 { break }
            }
            return sent
        }
        let ticks0 = cpuTicks(pid: b.process.processIdentifier)
        let t0 = monotonicSeconds()
        // A's result, read on a thread of its own: this task's thread is an event loop, which the
        // flood (and the hostile peer's socket) needs meanwhile.
        nonisolated(unsafe) let reader = a
        let line = try await EventLoops.runBlocking { try reader.readLine() }
        let seconds = monotonicSeconds() - t0
        let ticks = cpuTicks(pid: b.process.processIdentifier) - ticks0
        flooding.cancel()
        let closed = mallory?.closed
        // Closing fails the flood's pending writes (a write waiting for B to read would never
        // notice the cancellation).
        await mallory?.close()
        let sent = await flooding.value
        var result = try JSONDecoder().decode(FloodPingResult.self, from: Data(line.utf8))
        result.floodRate = seconds > 0 ? Double(sent) / seconds : 0
        if let closed { progress("flood \(kind.map { "\($0)" } ?? "none"): B closed the flooder: \(closed)") }
        return (result, seconds > 0 ? Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK))) / seconds * 100 : 0)
    }

    /// A process's user + system CPU time in clock ticks (/proc/PID/stat fields 14 and 15).
    static func cpuTicks(pid: Int32) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // Fields after the command name (which may hold spaces) start at field 3.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }
}
