import ArgumentParser
import Foundation
import MeshTransport

/// What a source measures.
enum Workload: String, ExpressibleByArgument, Codable {
    /// Large reliable messages: throughput.
    case bulk
    /// Small reliable messages, as fast as possible: message rate.
    case rate
    /// One small message at a time, answered by the sink: round-trip latency.
    case latency
}

/// `meshbench`: meshchat sessions measured beside a raw-TCP baseline with the same framing.
@main
struct MeshBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meshbench",
        abstract: "Benchmarks of meshchat sessions beside a raw-TCP baseline measured in the same run.",
        subcommands: [Suite.self, Sink.self, Source.self, RawSink.self, RawSource.self, CryptoBench.self, DiscoveryBench.self,
                      MeshCommand.self, RelayPingCommand.self, RawRelayCommand.self, PlacesBench.self, PlacesResident.self,
                      FloodBench.self, FloodPingCommand.self, TransferBench.self, ResourceSourceCommand.self, RatchetBench.self,
                      LinkSuiteBench.self, HandshakeBench.self, IdleBench.self, StoreWriteBench.self],
        defaultSubcommand: Suite.self)

    /// Runs tasks on SwiftNIO's loop threads and tunes the heap, as meshchat does, then the command.
    static func main() async {
        if ProcessInfo.processInfo.environment["MESHBENCH_DEFAULT_HEAP"] == nil {
            HeapTuning.keepFreedMemoryForReuse()
        }
        if ProcessInfo.processInfo.environment["MESHBENCH_NO_EXECUTOR"] == nil {
            EventLoops.installAsConcurrencyExecutor(loops: ProcessInfo.processInfo.environment["MESHBENCH_LOOPS"].flatMap(Int.init))
        }
        await main(nil)
    }
}

struct Sink: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "A meshchat session that counts, echoes and answers (prints {\"port\":N}).")
    @Option var port = 0
    @Flag(help: "Hash received data (SHA-256) for an integrity check.") var verify = false
    @Option(help: "Also dial a meshchat session on this port of 127.0.0.1 (to build a line of relays).") var connect: Int?
    func run() async throws { try await MeshWorkloads.sink(port: port, verify: verify, connect: connect) }
}

struct Source: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Connects to a meshchat sink and runs one workload (prints one JSON result).")
    @Option var port: Int
    @Option var workload: Workload = .bulk
    @Option var count = 256
    @Option(help: "Bytes per message.") var size = 1 << 20
    @Flag(help: "Hash sent data and compare with the sink's hash.") var verify = false
    @Option(help: "The sink's distance: 1 (the node at --port) or 2 (the node behind it, relayed; at most 64,000-byte messages, lossy).")
    var hops = 1
    func validate() throws {
        guard (1...2).contains(hops) else { throw ValidationError("Please give --hops 1 or 2.") }
    }
    func run() async throws {
        let result = try await MeshWorkloads.source(port: port, workload: workload, count: count, size: size, verify: verify, hops: hops)
        printJSON(result)
        if verify, result.sha256Sent != result.sha256Received { throw ExitCode(2) }
    }
}

struct RawSink: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raw-sink", abstract: "The raw-TCP baseline sink.")
    @Option var port = 0
    @Flag var verify = false
    @Flag(help: "Seal each frame with ChaChaPoly (the raw TCP + ChaChaPoly baseline); the source must match.") var sealed = false
    @Flag(help: "Seal each frame with AES-256-GCM instead (the raw TCP + AES-GCM baseline); the source must match.") var aesgcm = false
    func run() throws {
        try RawWorkloads.sink(port: port, verify: verify, sealed: aesgcm ? .aesGCM : sealed ? .chaChaPoly : nil)
    }
}

struct RawSource: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raw-source", abstract: "The raw-TCP baseline source.")
    @Option var port: Int
    @Option var workload: Workload = .bulk
    @Option var count = 256
    @Option var size = 1 << 20
    @Flag var verify = false
    @Flag(help: "Seal each frame with ChaChaPoly (the raw TCP + ChaChaPoly baseline); the sink must match.") var sealed = false
    @Flag(help: "Seal each frame with AES-256-GCM instead (the raw TCP + AES-GCM baseline); the sink must match.") var aesgcm = false
    func run() throws {
        let result = try RawWorkloads.source(port: port, workload: workload, count: count, size: size, verify: verify,
                                             sealed: aesgcm ? .aesGCM : sealed ? .chaChaPoly : nil)
        printJSON(result)
        if verify, result.sha256Sent != result.sha256Received { throw ExitCode(2) }
    }
}
