import ArgumentParser
import Foundation
import MeshLink

/// Link throughput of each cipher suite (PROTOCOL.md §4.11) beside raw TCP, in one run: 1 MiB
/// reliable messages over one real TCP link between a `source` and a `sink` process whose offer is
/// forced with `MESHCHAT_SUITES`, interleaved round by round with raw TCP and raw TCP + ChaChaPoly.
struct LinkSuiteBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "link-suites",
        abstract: "1 MiB message throughput over a real TCP link for each cipher suite, beside raw TCP (same run).")

    @Option(help: "Rounds per measurement; the table shows the median.") var rounds = 3
    @Option(name: .customLong("bulk-mib"), help: "MiB sent per round.") var bulkMiB = 1024

    func run() async throws {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        func forced(_ suite: CipherSuite) -> [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["MESHCHAT_SUITES"] = suite == .chaChaPoly ? "chachapoly" : "aesgcm,chachapoly"
            return environment
        }
        struct Transport {
            var label: String
            var sink: [String]
            var source: String
            var extra: [String]
            var environment: [String: String]?
        }
        let transports = [
            Transport(label: "raw TCP", sink: ["raw-sink"], source: "raw-source", extra: [], environment: nil),
            Transport(label: "raw TCP + ChaChaPoly", sink: ["raw-sink", "--sealed"], source: "raw-source", extra: ["--sealed"], environment: nil),
            Transport(label: "meshchat link, ChaChaPoly", sink: ["sink"], source: "source", extra: [], environment: forced(.chaChaPoly)),
            Transport(label: "meshchat link, AESGCM", sink: ["sink"], source: "source", extra: [], environment: forced(.aesGCM)),
        ]
        var sinks: [Child] = []
        defer { for sink in sinks { sink.stop() } }
        var ports: [Int] = []
        for transport in transports {
            let sink = try Child.start(me, transport.sink, environment: transport.environment)
            sinks.append(sink)
            ports.append(try sink.readPort())
        }
        var figures = [[Double]](repeating: [], count: transports.count)
        for round in 1...rounds {
            FileHandle.standardError.write(Data("link-suites: round \(round) of \(rounds)\n".utf8))
            for (index, transport) in transports.enumerated() {
                let child = try Child.start(me, [transport.source, "--port", "\(ports[index])", "--workload", "bulk",
                                                 "--count", "\(bulkMiB)", "--size", "\(1 << 20)"] + transport.extra,
                                            environment: transport.environment)
                let line = try child.readLine()
                child.process.waitUntilExit()
                guard child.process.terminationStatus == 0, let data = line.data(using: .utf8) else {
                    throw ValidationError("\(transport.label) failed (status \(child.process.terminationStatus)): \(line)")
                }
                figures[index].append(try JSONDecoder().decode(SourceResult.self, from: data).gbitPerSecond)
            }
        }
        let medians = figures.map { values in values.sorted()[values.count / 2] }
        print("")
        print("hardware AES on this machine: \(CipherSuite.hardwareAESAvailable ? "yes" : "no") (the default offer is \(CipherSuite.localOffer.map(\.description).joined(separator: ", ")))")
        print("| 1 MiB messages, one TCP link (median of \(rounds)) | Gbit/s | ÷ raw TCP |")
        print("|---|---|---|")
        for (transport, value) in zip(transports, medians) {
            print("| \(transport.label) | \(String(format: "%.2f", value)) | \(String(format: "%.2f×", medians[0] > 0 ? value / medians[0] : 0)) |")
        }
    }
}
