import ArgumentParser
import Foundation
import MeshLink
import MeshSession

/// `meshbench transfer`: bulk transfer through the library's streams and resources over one and
/// two hops, each beside raw TCP over the same hops and beside `Session.send` bulk over the same
/// hops, measured in the same run, interleaved round by round. Over one hop streams and resources
/// ride the link (PROTOCOL.md §6.3) and are sealed once, like `Session.send`; over two, twice.
///
/// Every figure is a separate set of processes on loopback: `raw-source` → (`raw-relay` →)
/// `raw-sink`; `source` → (`sink` as the relay →) `sink` (1 MiB reliable sends on one hop;
/// 60,000-byte sends sealed end to end across the relay; such sends never wait, so the sender's
/// own link queue and the relay drop what they cannot take: the figure is what arrived); `meshcat send` → (`sink` →) `meshcat listen`; `resource-source` →
/// (`sink` →) `sink` (`Session.sendResource` of the same file, automatic accept).
///
/// A stream's time runs from the reader's acceptance of the stream to the moment the reader's
/// application has read every byte, as `meshcat send` measures it (its `finished` event's
/// `seconds`): starting the processes, the handshake and finding the route are not in it, as they
/// are not in `Session.send` bulk's. A resource's time runs
/// from the offer (`sendResource` returned, the file hashed) to the receiver's `finishedReceiving`
/// (its hash checked); the received file is hashed again by the sink after that, untimed, and
/// compared with the input's.
///
/// `KEEP_SCRATCH=1` keeps the scratch directory (every process's stderr and data directory) to
/// look into a failed run.
struct TransferBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "Stream and resource throughput over one and two hops beside raw TCP and Session.send bulk (same run).")

    @Option(help: "MiB per transfer.") var mib = 256
    @Option(help: "Rounds; the table shows the median.") var rounds = 3
    @Flag(help: "Print {\"rows\":[{\"key\",\"unit\",\"meshchat\",\"baselines\"}]} (MB/s) instead of the table.") var json = false
    @Option(help: "Only these figures, comma-separated, of raw, send, stream, resource (default: all; the sealing ceiling is always measured; rows not run show —, and null in the JSON).")
    var only: String?
    @Option(help: "The streams' window in KiB, passed to both meshcat processes (default: the library's).")
    var streamWindow: Int?

    func validate() throws {
        guard (1...65_536).contains(mib) else { throw ValidationError("Please give --mib from 1 to 65536.") }
        guard (1...100).contains(rounds) else { throw ValidationError("Please give --rounds from 1 to 100.") }
        if let streamWindow, !(64...65_536).contains(streamWindow) { throw ValidationError("Please give --stream-window from 64 to 65536 (KiB).") }
        if let unknown = figureGroups.subtracting(Self.groups).first {
            throw ValidationError("--only: \(unknown) is not one of \(Self.groups.sorted().joined(separator: ", ")).")
        }
    }

    /// The figure groups `--only` may name.
    static let groups: Set<String> = ["raw", "send", "stream", "resource"]

    /// The groups to run: `--only`'s, or all.
    var figureGroups: Set<String> {
        guard let only else { return Self.groups }
        return Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// The bytes of one relayed `Session.send` (the largest a relayed payload may be is 64,000).
    static let relayedMessageSize = 60_000

    func run() async throws {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let bin = me.deletingLastPathComponent()
        let meshcat = bin.appendingPathComponent("meshcat").path
        guard FileManager.default.isExecutableFile(atPath: meshcat) else {
            throw ValidationError("\(meshcat) is not built (swift build -c release --product meshcat)")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("meshbench-transfer-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { if ProcessInfo.processInfo.environment["KEEP_SCRATCH"] == nil { try? FileManager.default.removeItem(at: scratch) } }
        let input = scratch.appendingPathComponent("input").path
        try Self.writeInput(path: input, mib: mib)

        var figures: [String: [Double]] = [:]
        var cpu: [String: [Double]] = [:]
        var relayedDelivered: [Double] = []
        var prepare: [Double] = []
        /// Runs one figure and records the CPU its processes used (they are all reaped on return).
        func measured<T>(_ key: String, _ body: () throws -> T) rethrows -> T {
            let before = Self.childrenCPUSeconds()
            let result = try body()
            cpu[key, default: []].append(Self.childrenCPUSeconds() - before)
            return result
        }
        for round in 1...rounds {
            FileHandle.standardError.write(Data("transfer: round \(round) of \(rounds)\n".utf8))
            figures["ceiling", default: []].append(SealCeiling.measure(chunkSize: StreamLimits.maxChunkSize) * 8 / 1e9)
            let groups = figureGroups
            for hops in 1...2 where groups.contains("raw") {
                figures["raw\(hops)", default: []].append(try measured("raw\(hops)") { try rawBulk(me.path, hops: hops) })
            }
            if groups.contains("send") {
                figures["send1", default: []].append(try measured("send1") { try sendBulk(me.path, hops: 1) }.gbitPerSecond)
                let relayed = try measured("send2") { try sendBulk(me.path, hops: 2) }
                figures["send2", default: []].append(relayed.gbitPerSecond)
                relayedDelivered.append(Double(relayed.messagesReceived ?? relayed.messages) / Double(relayed.messages))
            }
            if groups.contains("stream") {
                figures["stream1", default: []].append(try measured("stream1") {
                    try stream(meshcat, relay: nil, input: input, scratch: scratch, round: round)
                })
                figures["stream2", default: []].append(try measured("stream2") {
                    try stream(meshcat, relay: me.path, input: input, scratch: scratch, round: round)
                })
            }
            for hops in 1...2 where groups.contains("resource") {
                let sent = try measured("resource\(hops)") { try resource(me.path, hops: hops, input: input) }
                figures["resource\(hops)", default: []].append(sent.gbitPerSecond)
                prepare.append(sent.prepareSeconds ?? 0)
            }
        }
        let median = figures.mapValues { values in values.sorted()[values.count / 2] }
        let mbPerSecond = { (key: String) in (median[key] ?? 0) * 1e9 / 8 / 1e6 }
        /// A figure for the JSON: `null` when `--only` left it out (as the suite's missing baselines are).
        let jsonFigure = { (key: String) -> Any in median[key] == nil ? NSNull() : mbPerSecond(key) }
        let cpuMedian = cpu.mapValues { values in values.sorted()[values.count / 2] }
        let cpuPerMiB = { (key: String) in (cpuMedian[key] ?? 0) * 1000 / Double(mib) }
        if json {
            var rows: [[String: Any]] = []
            for (key, name, hops) in Self.rows {
                var baselines: [String: Any] = ["raw_tcp": jsonFigure("raw\(hops)")]
                if !name.hasPrefix("send") {
                    baselines["send_bulk"] = jsonFigure("send\(hops)")
                    baselines["send_bulk_1hop"] = jsonFigure("send1")
                    baselines["seal_ceiling"] = jsonFigure("ceiling")
                }
                rows.append(["key": key, "unit": "MB/s", "meshchat": jsonFigure("\(name)\(hops)"), "baselines": baselines,
                             "cpuMsPerMiB": cpuMedian["\(name)\(hops)"] == nil ? NSNull() : cpuPerMiB("\(name)\(hops)")])
            }
            let data = try JSONSerialization.data(withJSONObject: ["rows": rows, "mib": mib, "rounds": rounds], options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        // A figure `--only` left out prints "—", and so does a ratio with it.
        let f = { (key: String) in median[key] == nil ? "—" : String(format: "%.0f", mbPerSecond(key)) }
        let ratio = { (a: String, b: String) -> String in
            guard let top = median[a], let bottom = median[b], bottom > 0 else { return "—" }
            return String(format: "%.2f×", top / bottom)
        }
        let delivered = relayedDelivered.isEmpty ? 0 : relayedDelivered.sorted()[relayedDelivered.count / 2]
        print("")
        print("| transfer of \(mib) MiB (median of \(rounds)) | MB/s | raw TCP, same hops | ÷ raw | Session.send bulk, same hops | ÷ send | ÷ 1-hop send | ÷ sealing ceiling | goal |")
        print("|---|---|---|---|---|---|---|---|---|")
        print("| Session.send bulk, 1 MiB messages, 1 hop | \(f("send1")) | \(f("raw1")) | \(ratio("send1", "raw1")) | — | 1.00× | 1.00× | \(ratio("send1", "ceiling")) | — |")
        print("| Session.send bulk, 60,000-byte messages, 2 hops (relayed, sealed; \(String(format: "%.0f", delivered * 100))% arrived) | \(f("send2")) | \(f("raw2")) | \(ratio("send2", "raw2")) | — | 1.00× | \(ratio("send2", "send1")) | \(ratio("send2", "ceiling")) | — |")
        for (_, name, hops) in Self.rows where name != "send" {
            let label = name == "stream" ? "stream (meshcat)" : "resource (sendResource, automatic accept)"
            let key = "\(name)\(hops)"
            print("| \(label), \(hops) hop\(hops == 1 ? "" : "s") | \(f(key)) | \(f("raw\(hops)")) | \(ratio(key, "raw\(hops)")) | \(f("send\(hops)")) | \(ratio(key, "send\(hops)")) | \(ratio(key, "send1")) | \(ratio(key, "ceiling")) | ≥ 0.80× send |")
        }
        print("")
        print("Sealing ceiling: \(f("ceiling")) MB/s (median), one core sealing and one opening \(StreamLimits.maxChunkSize)-byte chunks twice, end to end")
        print("(ChaCha20-Poly1305, §19.4) and on the link (\(CipherSuite.hardwareAESAvailable ? "AES-256-GCM" : "ChaCha20-Poly1305"), §4.11), in this process, no I/O: streams and resources to a node")
        print("behind a relay are sealed twice, so this bounds them over 2 hops; to a neighbour they ride the link (version 7, §6.3)")
        print("and are sealed once, as Session.send is. The relayed send is lossy, so the 1-hop send bulk is the stronger bound for")
        print("2-hop transfers.")
        print("")
        let perMiB = { (key: String) in String(format: "%.1f", cpuPerMiB(key)) }
        print("CPU of all the figure's processes (user + system, median), ms per MiB: raw TCP \(perMiB("raw1")) / \(perMiB("raw2")) (1 / 2 hops),")
        print("Session.send \(perMiB("send1")) / \(perMiB("send2")), stream \(perMiB("stream1")) / \(perMiB("stream2")), resource \(perMiB("resource1")) / \(perMiB("resource2")).")
        print("On a loaded machine the processes wait for a core, so these say more than the rates; they include process start,")
        print("the handshake, and for resources the sender's hash before the offer and the sink's untimed hash after it.")
        print("")
        print("Stream times run from the reader's acceptance to its having read every byte (meshcat send's own measure), so,")
        print("like Session.send's, they leave out process start, handshake and route discovery. Resource times run from the offer to the receiver's finished")
        print("event (hash checked); before the offer the sender spent \(String(format: "%.2f", prepare.isEmpty ? 0 : prepare.sorted()[prepare.count / 2])) s (median) hashing and recording the file.")
        print("The 2-hop baselines: raw-source → raw-relay → raw-sink; Session.send to a node behind a relay (sealed end to end,")
        print("lossy: such a send never waits, so the sender's link queue and the relay drop what they cannot take, §13.2.7),")
        print("counting what arrived: it is no acknowledged transfer, so a ratio above 1 over 2 hops says how much it loses.")
        print("A relay charges each session message it forwards to its sender's session-relaying budget (§13.11: 8,192 units")
        print("at once, then 8,192 a second, a unit per packet and per started 16 KiB): about 98 MB/s of 60,000-byte chunks.")
    }

    /// The figures of the rows: (JSON key, figure name, hops).
    static let rows: [(String, String, Int)] = [
        ("send_bulk_1hop", "send", 1), ("send_bulk_2hop", "send", 2), ("stream_1hop", "stream", 1), ("stream_2hop", "stream", 2),
        ("resource_1hop", "resource", 1), ("resource_2hop", "resource", 2),
    ]

    /// The CPU time (user + system, seconds) of this process's children that have been reaped.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_CHILDREN.rawValue, &usage) == 0 else { return 0 }
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// A file of `mib` MiB of non-repeating bytes (the page cache serves it to every sender).
    static func writeInput(path: String, mib: Int) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw ValidationError("cannot create \(path)") }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var generator = SystemRandomNumberGenerator()
        var block = [UInt8](repeating: 0, count: 1 << 20)
        for _ in 0..<mib {
            for index in stride(from: 0, to: block.count, by: 8) {
                withUnsafeBytes(of: generator.next() as UInt64) { bytes in
                    for offset in 0..<8 { block[index + offset] = bytes[offset] }
                }
            }
            handle.write(Data(block))
        }
    }

    private func rawBulk(_ executable: String, hops: Int) throws -> Double {
        let sink = try Child.start(executable, ["raw-sink"])
        defer { sink.stop() }
        var port = try sink.readPort()
        var relay: Child?
        defer { relay?.stop() }
        if hops == 2 {
            let forwarder = try Child.start(executable, ["raw-relay", "--to", "\(port)"])
            relay = forwarder
            port = try forwarder.readPort()
        }
        return try Self.sourceResult(executable, ["raw-source", "--port", "\(port)", "--workload", "bulk", "--count", "\(mib)", "--size", "\(1 << 20)"]).gbitPerSecond
    }

    /// A `sink` to `source` run, hops away; with two hops a second `sink` relays.
    private func sendBulk(_ executable: String, hops: Int) throws -> SourceResult {
        let (port, nodes) = try Self.meshSink(executable, hops: hops)
        defer { nodes.forEach { $0.stop() } }
        let size = hops == 1 ? 1 << 20 : Self.relayedMessageSize
        let count = hops == 1 ? mib : max(1, mib * (1 << 20) / size)
        return try Self.sourceResult(executable, ["source", "--port", "\(port)", "--workload", "bulk", "--count", "\(count)",
                                                  "--size", "\(size)", "--hops", "\(hops)"])
    }

    /// A `resource-source` run of `input` to a `sink` hops away (through a second `sink` with two).
    private func resource(_ executable: String, hops: Int, input: String) throws -> SourceResult {
        let (port, nodes) = try Self.meshSink(executable, hops: hops)
        defer { nodes.forEach { $0.stop() } }
        return try Self.sourceResult(executable, ["resource-source", "--port", "\(port)", "--file", input, "--hops", "\(hops)"])
    }

    /// A `sink` and, with two hops, a `sink` connected to it as the relay in front (first in the
    /// list, so it stops first); the port to dial.
    private static func meshSink(_ executable: String, hops: Int) throws -> (port: Int, nodes: [Child]) {
        let sink = try Child.start(executable, ["sink"])
        var port: Int
        do { port = try sink.readPort() } catch { sink.stop(); throw error }
        guard hops == 2 else { return (port, [sink]) }
        do {
            let relay = try Child.start(executable, ["sink", "--connect", "\(port)"])
            do { port = try relay.readPort() } catch { relay.stop(); throw error }
            return (port, [relay, sink])
        } catch {
            sink.stop()
            throw error
        }
    }

    private static func sourceResult(_ executable: String, _ arguments: [String]) throws -> SourceResult {
        let child = try Child.start(executable, arguments)
        let line = try child.readLine()
        child.process.waitUntilExit()
        guard child.process.terminationStatus == 0 else { throw ValidationError("\(arguments[0]) failed: \(line)") }
        return try JSONDecoder().decode(SourceResult.self, from: Data(line.utf8))
    }

    /// One stream of the input file from `meshcat send` to `meshcat listen`, directly or through a
    /// `meshbench sink` relay; Gbit/s from the sender's start to its exit.
    private func stream(_ meshcat: String, relay relayExecutable: String?, input: String, scratch: URL, round: Int) throws -> Double {
        let tag = "\(relayExecutable == nil ? 1 : 2)-\(round)"
        var relay: Child?
        defer { relay?.stop() }
        var connect: [String] = []
        let window = streamWindow.map { ["--window", "\($0)"] } ?? []
        if let relayExecutable {
            let node = try Child.start(relayExecutable, ["sink"])
            relay = node
            connect = ["--connect", "127.0.0.1:\(try node.readPort())"]
        }
        let listener = try MeshcatProcess(meshcat, ["listen", "--count", "1", "--no-discovery",
                                                     "--data-dir", scratch.appendingPathComponent("listen-\(tag)").path] + window + connect,
                                          errorPath: scratch.appendingPathComponent("listen-\(tag).err").path)
        defer { listener.stop() }
        let (id, port) = try listener.ready()
        let target = connect.isEmpty ? ["--connect", "127.0.0.1:\(port)"] : connect
        let sender = try MeshcatProcess(meshcat, ["send", "--to", id, "--no-discovery",
                                                  "--data-dir", scratch.appendingPathComponent("send-\(tag)").path] + window + target,
                                        errorPath: scratch.appendingPathComponent("send-\(tag).err").path, input: input)
        sender.process.waitUntilExit()
        guard sender.process.terminationStatus == 0 else {
            throw ValidationError("meshcat send exited \(sender.process.terminationStatus): \(sender.errors())")
        }
        // The sender's own measure: from the reader's acceptance to its having read every byte.
        for line in sender.errors().split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["event"] as? String == "finished", let seconds = object["seconds"] as? Double, seconds > 0 else { continue }
            return Double(mib) * 8 * 1_048_576 / seconds / 1e9
        }
        throw ValidationError("meshcat send reported no finished event with its seconds: \(sender.errors())")
    }
}

/// A meshcat process: stdout discarded, stderr into a file (never a pipe nobody drains), read for
/// its ready line.
final class MeshcatProcess {
    let process = Process()
    private let errorPath: String

    init(_ executable: String, _ arguments: [String], errorPath: String, input: String? = nil) throws {
        self.errorPath = errorPath
        guard FileManager.default.createFile(atPath: errorPath, contents: nil) else { throw ValidationError("cannot create \(errorPath)") }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardInput = try input.map { try FileHandle(forReadingFrom: URL(fileURLWithPath: $0)) } ?? FileHandle.nullDevice
        try process.run()
    }

    /// The id and port of the ready line, `{"event":"ready","id":…,"port":…}` (polled, 30 s at most).
    func ready() throws -> (id: String, port: Int) {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            for line in errors().split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      object["event"] as? String == "ready", let id = object["id"] as? String, let port = object["port"] as? Int else { continue }
                return (id, port)
            }
            guard process.isRunning else { break }
            usleep(10_000)
        }
        throw ValidationError("meshcat gave no ready line: \(errors())")
    }

    /// What it wrote to stderr so far.
    func errors() -> String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
