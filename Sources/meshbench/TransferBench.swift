import ArgumentParser
import Foundation

/// `meshbench transfer`: bulk transfer through the library's streams (and resources, when given a
/// sender for them) over one and two hops, each beside raw TCP over the same hops and beside
/// `Session.send` bulk over one hop, measured in the same run, interleaved round by round.
///
/// Every figure is a separate set of processes on loopback: `raw-source` → (`raw-relay` →)
/// `raw-sink`; `source` → `sink` (1 MiB reliable sends); `meshcat send` → (`sink` as the relay →)
/// `meshcat listen`. A transfer's time runs from the sender's start to its exit (meshcat exits once
/// the receiver's application has read every byte), so it includes starting the process, the
/// handshake and finding the route: use a size where that is small (the default 256 MiB).
struct TransferBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "Stream throughput over one and two hops beside raw TCP and Session.send bulk (same run).")

    @Option(help: "MiB per transfer.") var mib = 256
    @Option(help: "Rounds; the table shows the median.") var rounds = 3
    @Flag(help: "Print one JSON object instead of the table.") var json = false

    func validate() throws {
        guard (1...65_536).contains(mib) else { throw ValidationError("Please give --mib from 1 to 65536.") }
        guard (1...100).contains(rounds) else { throw ValidationError("Please give --rounds from 1 to 100.") }
    }

    func run() async throws {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let bin = me.deletingLastPathComponent()
        let meshcat = bin.appendingPathComponent("meshcat").path
        guard FileManager.default.isExecutableFile(atPath: meshcat) else {
            throw ValidationError("\(meshcat) is not built (swift build -c release --product meshcat)")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("meshbench-transfer-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let input = scratch.appendingPathComponent("input").path
        try Self.writeInput(path: input, mib: mib)

        var figures: [String: [Double]] = [:]
        for round in 1...rounds {
            FileHandle.standardError.write(Data("transfer: round \(round) of \(rounds)\n".utf8))
            figures["raw1", default: []].append(try rawBulk(me.path, hops: 1))
            figures["raw2", default: []].append(try rawBulk(me.path, hops: 2))
            figures["send1", default: []].append(try sendBulk(me.path))
            figures["stream1", default: []].append(try stream(meshcat, relay: nil, input: input, scratch: scratch, round: round))
            figures["stream2", default: []].append(try stream(meshcat, relay: me.path, input: input, scratch: scratch, round: round))
        }
        let median = figures.mapValues { values in values.sorted()[values.count / 2] }
        if json {
            let object = median.mapValues { ["gbitPerSecond": $0] }
            let data = try JSONSerialization.data(withJSONObject: ["transfer": object, "mib": mib, "rounds": rounds], options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        let f = { (key: String) in String(format: "%.2f", median[key] ?? 0) }
        let ratio = { (a: String, b: String) in String(format: "%.2f×", (median[b] ?? 0) > 0 ? (median[a] ?? 0) / (median[b] ?? 1) : 0) }
        print("")
        print("| transfer of \(mib) MiB (median of \(rounds)) | Gbit/s | raw TCP, same hops | ÷ raw | ÷ Session.send bulk (1 hop) | goal |")
        print("|---|---|---|---|---|---|")
        print("| Session.send bulk, 1 MiB messages, 1 hop | \(f("send1")) | \(f("raw1")) | \(ratio("send1", "raw1")) | 1.00× | — |")
        print("| stream, 1 hop (meshcat) | \(f("stream1")) | \(f("raw1")) | \(ratio("stream1", "raw1")) | \(ratio("stream1", "send1")) | ≥ 0.80× send |")
        print("| stream, 2 hops (meshcat through a relay) | \(f("stream2")) | \(f("raw2")) | \(ratio("stream2", "raw2")) | \(ratio("stream2", "send1")) | ≥ 0.80× send |")
        print("")
        print("Stream times run from `meshcat send` starting to its exit (the receiver has read every byte), so they include")
        print("process start, handshake and route discovery. The 2-hop baseline is raw-source → raw-relay → raw-sink.")
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
        return try Self.bulkResult(executable, ["raw-source", "--port", "\(port)", "--workload", "bulk", "--count", "\(mib)", "--size", "\(1 << 20)"])
    }

    private func sendBulk(_ executable: String) throws -> Double {
        let sink = try Child.start(executable, ["sink"])
        defer { sink.stop() }
        let port = try sink.readPort()
        return try Self.bulkResult(executable, ["source", "--port", "\(port)", "--workload", "bulk", "--count", "\(mib)", "--size", "\(1 << 20)"])
    }

    private static func bulkResult(_ executable: String, _ arguments: [String]) throws -> Double {
        let child = try Child.start(executable, arguments)
        let line = try child.readLine()
        child.process.waitUntilExit()
        guard child.process.terminationStatus == 0 else { throw ValidationError("\(arguments[0]) failed: \(line)") }
        return try JSONDecoder().decode(SourceResult.self, from: Data(line.utf8)).gbitPerSecond
    }

    /// One stream of the input file from `meshcat send` to `meshcat listen`, directly or through a
    /// `meshbench sink` relay; Gbit/s from the sender's start to its exit.
    private func stream(_ meshcat: String, relay relayExecutable: String?, input: String, scratch: URL, round: Int) throws -> Double {
        let tag = "\(relayExecutable == nil ? 1 : 2)-\(round)"
        var relay: Child?
        defer { relay?.stop() }
        var connect: [String] = []
        if let relayExecutable {
            let node = try Child.start(relayExecutable, ["sink"])
            relay = node
            connect = ["--connect", "127.0.0.1:\(try node.readPort())"]
        }
        let listener = try MeshcatProcess(meshcat, ["listen", "--count", "1", "--no-discovery",
                                                     "--data-dir", scratch.appendingPathComponent("listen-\(tag)").path] + connect,
                                          errorPath: scratch.appendingPathComponent("listen-\(tag).err").path)
        defer { listener.stop() }
        let (id, port) = try listener.ready()
        let target = connect.isEmpty ? ["--connect", "127.0.0.1:\(port)"] : connect
        let start = ContinuousClock.now
        let sender = try MeshcatProcess(meshcat, ["send", "--to", id, "--no-discovery",
                                                  "--data-dir", scratch.appendingPathComponent("send-\(tag)").path] + target,
                                        errorPath: scratch.appendingPathComponent("send-\(tag).err").path, input: input)
        sender.process.waitUntilExit()
        let elapsed = ContinuousClock.now - start
        guard sender.process.terminationStatus == 0 else {
            throw ValidationError("meshcat send exited \(sender.process.terminationStatus): \(sender.errors())")
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(mib) * 8 * 1_048_576 / seconds / 1e9
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
