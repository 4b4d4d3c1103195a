import ArgumentParser
import Foundation
import MeshChat
import MeshSession
import MeshStore
import MeshWire

/// Figure 4: whether every private line a ``Messenger`` accepted is delivered exactly once while
/// a tenth of the links flap.
///
/// A grid of real sessions in this process on loopback, each with a messenger over an in-memory
/// store. Two phases on the same mesh: first (the baseline) `messages` lines between seeded
/// random pairs paced over `seconds` with every link steady; then as many again while a seeded
/// random `fraction` of the links flap (closed with a goodbye, re-dialled after a random pause).
/// When a phase's sending ends the flapping stops, every link is brought back, and the phase
/// waits (with a deadline) until every accepted line's sender saw it `delivered` and its
/// destination got it. Duplicates are counted at the end of the run.
enum FlapDeliveryBench {
    /// The options of this figure.
    struct Options: ParsableArguments {
        @Option(name: .customLong("flap-rows"), help: "Rows of the flapping grid.") var rows = 4
        @Option(name: .customLong("flap-columns"), help: "Columns of the flapping grid.") var columns = 5
        @Option(name: .customLong("flap-messages"), help: "Private lines per phase.") var messages = 200
        @Option(name: .customLong("flap-seconds"), help: "Seconds over which a phase's lines are sent (and links flap).") var seconds = 10.0
        @Option(name: .customLong("flap-fraction"), help: "Fraction of the links that flap.") var fraction = 0.1
        @Option(name: .customLong("flap-seed"), help: "Seed for pairs, flapping links and pauses.") var seed: UInt64 = 4
        @Option(name: .customLong("flap-deadline"), help: "Seconds to wait for full delivery after a phase's sending.") var deadline = 120.0
    }

    /// What the pumps saw of the lines.
    struct Lines: Sendable {
        /// Accepted lines: id → destination node index.
        var accepted: [String: Int] = [:]
        /// Ids whose sender saw `delivered`, and when it first did.
        var delivered: [String: ContinuousClock.Instant] = [:]
        /// Ids → how many times the destination reported the line.
        var received: [String: Int] = [:]
        /// Lines reported by a node that was not their destination.
        var misdelivered = 0

        /// Whether every id of `ids` is delivered and received.
        func complete(_ ids: [String]) -> Bool {
            ids.allSatisfy { delivered[$0] != nil && received[$0, default: 0] >= 1 }
        }
    }

    /// What one phase measured.
    struct Phase {
        var ids: [String] = []
        /// When each accepted line's `send` was called.
        var sendStarts: [String: ContinuousClock.Instant] = [:]
        var refused = 0
        var flaps = 0
        var sendSeconds = 0.0
        var completionAfterSending: Double?
    }

    /// Runs the figure.
    static func run(_ options: Options) async throws -> MeshTable {
        let count = options.rows * options.columns
        let links = BroadcastCostBench.grid(rows: options.rows, columns: options.columns)
        var rng = SplitMix(seed: options.seed)
        let flapping = Array(links.shuffled(using: &rng).prefix(max(1, Int((options.fraction * Double(links.count)).rounded()))))
        let lines = Watch(Lines())
        let messengers = Watch([Int: Messenger]())
        var configuration = Messenger.Configuration()
        configuration.retryInterval = .milliseconds(500)
        configuration.maxRetryInterval = .seconds(2)
        configuration.tick = .milliseconds(100)
        let messengerConfiguration = configuration

        let consumer: LoopbackMesh.Consumer = { mesh, node in
            guard let store = try? MessageStore.inMemory(),
                  let messenger = try? Messenger(session: mesh.sessions[node], store: store, configuration: messengerConfiguration) else { return }
            messengers.update { $0[node] = messenger }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await messenger.run() }
                for await event in messenger.events {
                    switch event {
                    case .session(let event):
                        mesh.record(event, at: node)
                    case .status(let message) where message.status == .delivered:
                        let now = ContinuousClock.now
                        lines.update { $0.delivered[message.id] = $0.delivered[message.id] ?? now }
                    case .message(let message) where !message.isOutgoing && message.conversation != .mesh:
                        lines.update {
                            $0.received[message.id, default: 0] += 1
                            if let destination = $0.accepted[message.id], destination != node { $0.misdelivered += 1 }
                        }
                    default:
                        break
                    }
                }
            }
        }

        let (steady, flapped) = try await LoopbackMesh.with(count: count, name: "flap", consumer: consumer) { mesh in
            for (a, b) in links { mesh.link(a, b) }
            try await messengers.wait(for: "every messenger running", timeout: .seconds(10)) { $0.count == count }
            try await mesh.waitFullyReachable(timeout: .seconds(60))
            let all = messengers.read { $0 }
            var pairs = SplitMix(seed: options.seed &+ 1)
            progress("flapping: baseline phase, \(options.messages) lines, no flapping")
            let steady = try await phase("steady", mesh, all, lines, options, flapping: [], rng: &pairs)
            progress("flapping: \(flapping.count) of \(links.count) links flapping, \(options.messages) lines")
            let flapped = try await phase("flapping", mesh, all, lines, options, flapping: flapping, rng: &pairs)
            return (steady, flapped)
        }

        let final = lines.read { $0 }
        func duplicates(_ phase: Phase) -> Int { phase.ids.reduce(0) { $0 + max(0, final.received[$1, default: 0] - 1) } }
        func delivered(_ phase: Phase) -> Int { phase.ids.filter { final.delivered[$0] != nil && final.received[$0, default: 0] >= 1 }.count }
        /// Per line: seconds from the send call to the sender's `delivered` event, sorted.
        func latencies(_ phase: Phase) -> [Double] {
            phase.ids.compactMap { id in final.delivered[id].flatMap { end in phase.sendStarts[id].map { seconds(end - $0) } } }.sorted()
        }
        let (flapLatency, steadyLatency) = (latencies(flapped), latencies(steady))
        func slow(_ sorted: [Double]) -> Double { Double(sorted.filter { $0 > 0.1 }.count) }
        let rows = [
            MeshRow("lines accepted (of \(options.messages))", "", Double(flapped.ids.count), Double(steady.ids.count)),
            MeshRow("accepted lines delivered (receipt at sender and line at destination)", "%",
                    100 * Double(delivered(flapped)) / Double(max(flapped.ids.count, 1)),
                    100 * Double(delivered(steady)) / Double(max(steady.ids.count, 1)), goal: "100%"),
            MeshRow("duplicate lines at destinations", "", Double(duplicates(flapped)), Double(duplicates(steady)), goal: "0"),
            MeshRow("time from the last send (flapping stopped) to full delivery", "s",
                    flapped.completionAfterSending, steady.completionAfterSending),
            MeshRow("per-line send → delivered (receipt), p50", "ms", percentile(flapLatency, 0.5) * 1000, percentile(steadyLatency, 0.5) * 1000),
            MeshRow("per-line send → delivered, p99", "ms", percentile(flapLatency, 0.99) * 1000, percentile(steadyLatency, 0.99) * 1000),
            MeshRow("per-line send → delivered, max", "ms", (flapLatency.last ?? 0) * 1000, (steadyLatency.last ?? 0) * 1000),
            MeshRow("lines delivered after more than 100 ms (recovered by a re-send)", "", slow(flapLatency), slow(steadyLatency)),
            MeshRow("time to send (paced)", "s", flapped.sendSeconds, steady.sendSeconds),
        ]
        let linkNames = flapping.map { "\($0.0)—\($0.1)" }.joined(separator: ", ")
        let notes = [
            "\(count) real Sessions in one process on 127.0.0.1, a \(options.rows)×\(options.columns) grid (\(links.count) links), "
                + "each with a Messenger over MessageStore.inMemory(). Lines go between seeded random pairs with "
                + "messenger.send(text:to:), paced over \(options.seconds) s. Baseline: the same mesh, earlier in the same run, no flapping.",
            "Flapping: \(flapping.count) links (\(linkNames)) each closed with a goodbye after 0.3–1.5 s up and re-dialled after "
                + "0.1–1.0 s down (seeded), \(flapped.flaps) closes in all, until the sending ended; then all links were restored.",
            "Messenger retries shortened for the benchmark: retryInterval 0.5 s doubling to 2 s, tick 0.1 s "
                + "(defaults 4 s, 60 s, 0.5 s). Lines are also re-sent at once when a route to the destination appears.",
            "Refused at send: \(flapped.refused) (flapping) / \(steady.refused) (steady); lines reported by a node that was not "
                + "their destination: \(final.misdelivered).",
        ]
        return MeshTable(title: "Private-line delivery with \(Int(options.fraction * 100))% of links flapping",
                         subject: "links flapping", baselineName: "no flapping (same run)", rows: rows, notes: notes)
    }

    /// Sends one phase's lines (flapping `flapping` meanwhile) and waits for their delivery.
    static func phase(_ name: String, _ mesh: LoopbackMesh, _ messengers: [Int: Messenger], _ lines: Watch<Lines>,
                      _ options: Options, flapping: [(Int, Int)], rng: inout SplitMix) async throws -> Phase {
        var result = Phase()
        let count = mesh.sessions.count
        let pairs: [(Int, Int)] = (0..<options.messages).map { _ in
            let source = Int.random(in: 0..<count, using: &rng)
            let destination = (source + Int.random(in: 1..<count, using: &rng)) % count
            return (source, destination)
        }
        let interval = Duration.nanoseconds(Int64(options.seconds * 1e9 / Double(max(options.messages, 1))))
        let flapSeed = options.seed &+ 2
        let start = ContinuousClock.now
        let flaps = try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, (a, b)) in flapping.enumerated() {
                group.addTask { await flap(mesh, a, b, seed: flapSeed &+ UInt64(index)) }
            }
            for (i, (source, destination)) in pairs.enumerated() {
                try await Task.sleep(until: start + interval * i, clock: .continuous)  // pacing
                let called = ContinuousClock.now
                do {
                    let stored = try await messengers[source]!.send(text: "\(name) line \(i) \(source)→\(destination)", to: mesh.peers[destination])
                    lines.update { $0.accepted[stored.id] = destination }
                    result.ids.append(stored.id)
                    result.sendStarts[stored.id] = called
                } catch {
                    result.refused += 1
                }
            }
            group.cancelAll()
            var total = 0
            while let closes = try await group.next() { total += closes }
            return total
        }
        result.flaps = flaps
        let sent = ContinuousClock.now
        result.sendSeconds = seconds(sent - start)
        try await mesh.waitFullyReachable(timeout: .seconds(60))
        let ids = result.ids
        do {
            let done = try await lines.wait(for: "every \(name) line delivered", timeout: .seconds(options.deadline)) { $0.complete(ids) }
            result.completionAfterSending = seconds(done - sent)
        } catch let error as DeadlineExceeded {
            progress("\(error)")
        }
        return result
    }

    /// Flaps one link until cancelled, then leaves it up.
    /// - Returns: how many times it was closed.
    static func flap(_ mesh: LoopbackMesh, _ a: Int, _ b: Int, seed: UInt64) async -> Int {
        var rng = SplitMix(seed: seed)
        var closes = 0
        while true {
            guard (try? await Task.sleep(for: .milliseconds(Int.random(in: 300...1500, using: &rng)))) != nil else { return closes }
            mesh.unlink(a, b)
            closes += 1
            let down = (try? await Task.sleep(for: .milliseconds(Int.random(in: 100...1000, using: &rng)))) != nil
            mesh.link(a, b)
            if !down { return closes }
        }
    }
}
