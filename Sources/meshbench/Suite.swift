import ArgumentParser
import Foundation

/// Runs every workload against three transports, interleaved round by round, and prints a table
/// with each meshchat figure beside two baselines measured in the same run: raw TCP (the same
/// framing, no crypto) and raw TCP + ChaChaPoly (the same program with each frame sealed and
/// opened with swift-crypto's ChaChaPoly and nothing else, ``RawSealing``). The second baseline's
/// ratio to the first is the best a transport that encrypts every byte with swift-crypto can do.
/// The throughput and rate rows also have a `zeromq` baseline (``ZeroMQBaseline``: pyzmq
/// PUSH/PULL, same count and size), and the relay rows compare one meshchat relay with `raw-relay`
/// (``SuiteRelayRows``).
struct Suite: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run all session benchmarks and print the comparison table.")

    @Option(help: "Rounds per measurement; the table shows the median.") var rounds = 3
    @Option(name: .customLong("bulk-mib"), help: "MiB sent per bulk round.") var bulkMiB = 1024
    @Option(help: "64-byte messages per rate round.") var rateCount = 200_000
    @Option(help: "Round trips per latency round.") var latencyCount = 10_000
    @Option(help: "Path of the meshchat binary for the idle-RSS figure (default: beside meshbench).") var meshchat: String?
    @Option(help: "Round trips per latency round with a CPU hog on one core (0 leaves that row out).") var busyCount = 5_000
    @Option(name: .customLong("zeromq"), help: "Path of scripts/bench-zmq.py for the zeromq baselines (without it they are null).")
    var zeromqScript: String?
    @Flag(help: "Print one JSON object, {\"rows\": [{\"key\", \"unit\", \"meshchat\", \"baselines\": {…}}]}, instead of the table.")
    var json = false

    func validate() throws {
        guard rounds >= 1, bulkMiB >= 1, rateCount >= 1, latencyCount >= 1, busyCount >= 0 else {
            throw ValidationError("--rounds, --bulk-mib, --rate-count and --latency-count must be at least 1, --busy-count at least 0")
        }
    }

    func run() async throws {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let meshchatPath = meshchat ?? me.deletingLastPathComponent().appendingPathComponent("meshchat").path

        let rawSink = try Child.start(me.path, ["raw-sink"])
        let sealedSink = try Child.start(me.path, ["raw-sink", "--sealed"])
        let meshSink = try Child.start(me.path, ["sink"])
        let aesSink = try Child.start(me.path, ["raw-sink", "--aesgcm"])
        defer {
            rawSink.stop()
            sealedSink.stop()
            meshSink.stop()
            aesSink.stop()
        }
        let rawPort = try rawSink.readPort()
        let sealedPort = try sealedSink.readPort()
        let meshPort = try meshSink.readPort()
        let aesPort = try aesSink.readPort()
        var relay = try SuiteRelayRows.start(me.path, echoPort: rawPort, aesPort: aesPort)
        defer { relay.stop() }
        var zeromq = zeromqScript.map(ZeroMQBaseline.init(script:))
        if zeromq == nil { progress("bench: no --zeromq script given; the zeromq baselines are null") }
        /// pyzmq PUSH/PULL: 1 MiB throughput (Gbit/s) and 64-byte rate (msg/s); `nil` when it could not run.
        var zeromqBulk: [Double?] = [], zeromqRate: [Double?] = []
        /// Raw TCP + AES-GCM, 1 MiB messages: the ceiling of a link on the AESGCM suite (version 4).
        var aesBulk: [Double] = []

        struct Row {
            var key: String
            var label: String
            var unit: String
            var mesh: [Double] = []
            var raw: [Double] = []
            var sealed: [Double] = []
            var higherIsBetter: Bool
            var target: String
        }
        var rows = [
            Row(key: "throughput_1mib", label: "reliable throughput, 1 MiB messages", unit: "Gbit/s", higherIsBetter: true, target: "≥ 50% of raw"),
            Row(key: "rate_64b", label: "reliable 64-byte message rate", unit: "msg/s", higherIsBetter: true, target: "—"),
            Row(key: "rtt_p50_64b", label: "64-byte round trip p50", unit: "µs", higherIsBetter: false, target: "≤ 1.5× raw"),
            Row(key: "rtt_p99_64b", label: "64-byte round trip p99", unit: "µs", higherIsBetter: false, target: "≤ 2× raw"),
        ]
        for round in 1...rounds {
            FileHandle.standardError.write(Data("bench: round \(round) of \(rounds)\n".utf8))
            aesBulk.append(try await source(me.path, .aesGCM, aesPort, .bulk, count: bulkMiB, size: 1 << 20).gbitPerSecond)
            zeromqBulk.append(zeromq?.run(count: bulkMiB, size: 1 << 20)?.gbitPerSecond)
            zeromqRate.append(zeromq?.run(count: rateCount, size: 64)?.messagesPerSecond)
            try await relay.measureRound(suite: self, me.path, echoPort: rawPort)
            for transport in [Transport.raw, .sealed, .mesh] {
                let port = switch transport {
                case .raw: rawPort
                case .sealed: sealedPort
                case .mesh: meshPort
                case .aesGCM: aesPort
                }
                let bulk = try await source(me.path, transport, port, .bulk, count: bulkMiB, size: 1 << 20)
                let rate = try await source(me.path, transport, port, .rate, count: rateCount, size: 64)
                let latency = try await source(me.path, transport, port, .latency, count: latencyCount, size: 64)
                let values = [bulk.gbitPerSecond, rate.messagesPerSecond, latency.p50Microseconds ?? 0, latency.p99Microseconds ?? 0]
                for i in rows.indices {
                    switch transport {
                    case .raw: rows[i].raw.append(values[i])
                    case .sealed: rows[i].sealed.append(values[i])
                    case .mesh: rows[i].mesh.append(values[i])
                    case .aesGCM: break
                    }
                }
            }
        }

        // The round trip again while a CPU hog spins on one core (pinned to core 0 with taskset).
        var busy = Row(key: "rtt_p99_64b_busy", label: "64-byte round trip p99, a CPU hog on one core", unit: "µs", higherIsBetter: false,
                       target: "≤ 2× raw")
        if busyCount > 0 {
            let hog = try CPUHog.start()
            defer { hog.stop() }
            for _ in 1...rounds {
                busy.raw.append(try await source(me.path, .raw, rawPort, .latency, count: busyCount, size: 64).p99Microseconds ?? 0)
                busy.mesh.append(try await source(me.path, .mesh, meshPort, .latency, count: busyCount, size: 64).p99Microseconds ?? 0)
            }
        }

        // Idle RSS: a meshchat process with one connected peer, beside the raw sink process.
        let idle = try IdleMeasurement.measure(meshchat: meshchatPath)
        let rawRSS = residentBytes(pid: rawSink.process.processIdentifier) ?? 0
        let handshakes = try HandshakeRate.handshakes(), x25519 = try HandshakeRate.x25519()
        let mb = 1024.0 * 1024.0

        /// The zeromq figure: the median of the rounds, or `nil` when any round could not run.
        func zeromqMedian(_ values: [Double?]) -> Double? {
            let figures = values.compactMap { $0 }
            return figures.isEmpty || figures.count < values.count ? nil : median(figures)
        }
        let zeromqFigures = ["throughput_1mib": zeromqMedian(zeromqBulk), "rate_64b": zeromqMedian(zeromqRate)]

        if json {
            var out: [[String: Any]] = rows.map { row in
                var baselines: [String: Any] = ["raw_tcp": median(row.raw)]
                if row.key == "throughput_1mib" {
                    baselines["raw_tcp_chachapoly"] = median(row.sealed)
                    baselines["raw_tcp_aesgcm"] = median(aesBulk)
                    baselines["raw_tcp_aead"] = max(median(row.sealed), median(aesBulk))
                }
                if let zeromq = zeromqFigures[row.key] { baselines["zeromq"] = zeromq ?? NSNull() }
                return ["key": row.key, "unit": row.unit, "meshchat": median(row.mesh), "baselines": baselines]
            }
            if busyCount > 0 {
                out.append(["key": busy.key, "unit": busy.unit, "meshchat": median(busy.mesh), "baselines": ["raw_tcp": median(busy.raw)]])
            }
            out.append(["key": "idle_rss_mb", "unit": "MB", "meshchat": Double(idle) / mb, "baselines": ["raw_sink": Double(rawRSS) / mb]])
            out.append(["key": "handshakes_per_s", "unit": "1/s", "meshchat": handshakes, "baselines": ["x25519_ops_per_s": x25519]])
            out += relay.jsonRows(median)
            let data = try JSONSerialization.data(withJSONObject: ["rows": out], options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }

        print("")
        print("| measurement (median of \(rounds)) | meshchat | raw TCP + ChaChaPoly¹ | raw TCP baseline | meshchat ÷ raw | ChaChaPoly ÷ raw (ceiling¹) | target |")
        print("|---|---|---|---|---|---|---|")
        for row in rows {
            let mesh = median(row.mesh)
            let sealed = median(row.sealed)
            let raw = median(row.raw)
            let ratio = { (value: Double) in String(format: "%.2f×", raw > 0 ? value / raw : 0) }
            print("| \(row.label) | \(format(mesh)) \(row.unit) | \(format(sealed)) \(row.unit) | \(format(raw)) \(row.unit) | \(ratio(mesh)) | \(ratio(sealed)) | \(row.target) |")
            if let zeromq = zeromqFigures[row.key] {
                let figure = zeromq.map { "\(format($0)) \(row.unit)" } ?? "not measured (no pyzmq)"
                let ratio = zeromq.map { String(format: "%.2f×", $0 > 0 ? mesh / $0 : 0) } ?? "—"
                print("| \(row.label), ZeroMQ (pyzmq PUSH/PULL) baseline | — | — | \(figure) | meshchat ÷ ZeroMQ: \(ratio) | — | \(row.key == "rate_64b" ? "≥ 1× ZeroMQ" : "—") |")
            }
        }
        print("| reliable throughput, 1 MiB messages, raw TCP + AES-256-GCM (the AESGCM suite's ceiling) | — | \(format(median(aesBulk))) Gbit/s | "
              + "\(format(median(rows[0].raw))) Gbit/s | meshchat ÷ this: \(String(format: "%.2f×", median(aesBulk) > 0 ? median(rows[0].mesh) / median(aesBulk) : 0)) | "
              + "\(String(format: "%.2f×", median(rows[0].raw) > 0 ? median(aesBulk) / median(rows[0].raw) : 0)) | — |")
        if busyCount > 0 {
            let (mesh, raw) = (median(busy.mesh), median(busy.raw))
            print("| \(busy.label) | \(format(mesh)) µs | — | \(format(raw)) µs | \(String(format: "%.2f×", raw > 0 ? mesh / raw : 0)) | — | \(busy.target) |")
        }
        print("| link handshakes per second, one core (Noise XX + identity proofs, no sockets) | \(format(handshakes)) | — | "
              + "\(format(x25519)) X25519/s | \(String(format: "%.2f×", x25519 > 0 ? handshakes / x25519 : 0)) of X25519 (5 per handshake: ≤ 0.20×) | — | ≥ 2,000/s |")
        for line in relay.tableRows(median, format) { print(line) }
        print("| idle peer RSS (one peer connected) | \(String(format: "%.1f", Double(idle) / mb)) MB | — | \(String(format: "%.1f", Double(rawRSS) / mb)) MB (raw sink process) | \(String(format: "%.2f×", rawRSS > 0 ? Double(idle) / Double(rawRSS) : 0)) | — | ≤ 30 MB |")
        print("")
        print("¹ raw TCP + ChaChaPoly: the raw-TCP program with each frame's body (flags byte and up to 65,518 data bytes)")
        print("  sealed with swift-crypto's ChaChaPoly by the sender and opened by the receiver, nothing else (no handshake,")
        print("  envelope, tasks or event loop). Its ratio to raw TCP is the ceiling for any Noise ChaChaPoly transport on")
        print("  swift-crypto on this machine; meshchat ÷ (raw TCP + ChaChaPoly) = \(rows.map { row in String(format: "%.2f", median(row.sealed) > 0 ? median(row.mesh) / median(row.sealed) : 0) }.joined(separator: " / ")) for the rows above.")
    }

    /// The transports a round measures.
    enum Transport {
        case raw, sealed, mesh, aesGCM
    }

    /// One `source` (meshchat) or `raw-source` run against the sink at `port`, `hops` away.
    func source(_ executable: String, _ transport: Transport, _ port: Int, _ workload: Workload,
                count: Int, size: Int, hops: Int = 1) async throws -> SourceResult {
        let command = transport == .mesh ? "source" : "raw-source"
        let cipher = switch transport {
        case .sealed: ["--sealed"]
        case .aesGCM: ["--aesgcm"]
        case .raw, .mesh: [String]()
        }
        let child = try Child.start(executable, [command, "--port", "\(port)", "--workload", workload.rawValue,
                                                 "--count", "\(count)", "--size", "\(size)"] + cipher
                                                 + (hops == 1 ? [] : ["--hops", "\(hops)"]))
        let line = try child.readLine()
        child.process.waitUntilExit()
        guard child.process.terminationStatus == 0, let data = line.data(using: .utf8) else {
            throw ValidationError("\(command) \(workload) failed (status \(child.process.terminationStatus)): \(line)")
        }
        return try JSONDecoder().decode(SourceResult.self, from: data)
    }

    func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    func format(_ value: Double) -> String {
        if value >= 1_000_000 { return String(format: "%.2fM", value / 1_000_000) }
        if value >= 10_000 { return String(format: "%.0fk", value / 1000) }
        if value >= 100 { return String(format: "%.0f", value) }
        return String(format: "%.2f", value)
    }
}

/// A child process whose stdout is read line by line.
final class Child {
    let process = Process()
    private let output = Pipe()
    private var buffer = Data()

    static func start(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Child {
        let child = Child()
        child.process.executableURL = URL(fileURLWithPath: executable)
        child.process.arguments = arguments
        child.process.standardOutput = child.output
        child.process.standardInput = FileHandle.nullDevice
        if let environment { child.process.environment = environment }
        try child.process.run()
        return child
    }

    /// Reads one line of stdout (blocking); throws at end of output.
    func readLine() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer = Data(buffer[(newline + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw ValidationError("\(process.executableURL?.lastPathComponent ?? "child") ended without output") }
            buffer.append(chunk)
        }
    }

    func readPort() throws -> Int {
        let line = try readLine()
        guard let data = line.data(using: .utf8),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let port = object["port"] as? Int
        else { throw ValidationError("expected {\"port\":N}, got \(line)") }
        return port
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// Starts two meshchat processes, connects them, lets them idle and reads the first one's RSS.
enum IdleMeasurement {
    /// The idle RSS in bytes of a `meshchat --no-discovery --keep-running` process with one peer
    /// connected, read three seconds after the connection; `inspect` sees its pid just before.
    static func measure(meshchat: String, inspect: (Int32) -> Void = { _ in }) throws -> Int {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("meshbench-idle-\(getpid())").path
        let a = try Child.start(meshchat, ["--name", "idle-a", "--json", "--keep-running", "--no-discovery",
                                           "--data-dir", directory + "/a", "--log-level", "error"])
        defer { a.stop() }
        let ready = try a.readLine()
        guard let data = ready.data(using: .utf8),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let port = object["port"] as? Int
        else { throw ValidationError("meshchat did not print a ready event: \(ready)") }
        let b = try Child.start(meshchat, ["--name", "idle-b", "--json", "--keep-running", "--no-discovery",
                                           "--data-dir", directory + "/b", "--connect", "127.0.0.1:\(port)", "--log-level", "error"])
        defer { b.stop() }
        while !(try a.readLine()).contains("\"state\":\"connected\"") {}
        // Idle: a few keepalive periods pass with nothing else to do.
        Thread.sleep(forTimeInterval: 3)
        inspect(a.process.processIdentifier)
        return residentBytes(pid: a.process.processIdentifier) ?? 0
    }
}
