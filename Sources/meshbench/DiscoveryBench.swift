import ArgumentParser
import Foundation

/// `meshbench discovery`: how long two meshchat peers take from process start to their first
/// connection through avahi-daemon, beside avahi's own publish-to-resolve time in the same run.
struct DiscoveryBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discovery",
        abstract: "Process start to first connected peer (discovery + invitation), beside avahi-publish → avahi-browse.")

    @Option(help: "The meshchat executable.") var meshchat: String
    @Option(help: "Runs of each; the median is reported.") var runs = 10

    func run() throws {
        var meshTimes: [Double] = []
        var avahiTimes: [Double] = []
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("meshbench-discovery-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for run in 1...runs {
            avahiTimes.append(try Self.avahiBaseline())
            meshTimes.append(try Self.meshchatStartToConnected(meshchat, directory: "\(directory)/\(run)"))
            FileHandle.standardError.write(Data("discovery run \(run)/\(runs): avahi \(Self.ms(avahiTimes.last!)) ms, meshchat \(Self.ms(meshTimes.last!)) ms\n".utf8))
        }
        let mesh = median(meshTimes)
        let avahi = median(avahiTimes)
        print("")
        print("| discovery (median of \(runs)) | meshchat | baseline | difference | ratio |")
        print("|---|---|---|---|---|")
        print("| process start → first connected peer vs avahi-publish → avahi-browse resolved (ms) | \(Self.ms(mesh)) | \(Self.ms(avahi)) | \(Self.ms(mesh - avahi)) | \(String(format: "%.2f", mesh / avahi))× |")
        print("")
        print("meshchat runs (ms): \(meshTimes.map(Self.ms).joined(separator: " "))")
        print("avahi runs (ms):    \(avahiTimes.map(Self.ms).joined(separator: " "))")
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.0f", seconds * 1000) }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    static func uniqueService() -> String {
        "b" + String((0..<10).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
    }

    /// Two meshchat processes started together; seconds until the first reports a connected peer.
    static func meshchatStartToConnected(_ meshchat: String, directory: String) throws -> Double {
        let service = uniqueService()
        let started = ContinuousClock.now
        let a = try Child.start(meshchat, ["--name", "bench-a", "--json", "--keep-running", "--service", service,
                                           "--data-dir", directory + "/a", "--log-level", "error"])
        let b = try Child.start(meshchat, ["--name", "bench-b", "--json", "--keep-running", "--service", service,
                                           "--data-dir", directory + "/b", "--log-level", "error"])
        defer {
            a.stop()
            b.stop()
        }
        while !(try a.readLine()).contains("\"state\":\"connected\"") {}
        return seconds(ContinuousClock.now - started)
    }

    /// avahi-browse already running; seconds from starting avahi-publish to the resolved line.
    static func avahiBaseline() throws -> Double {
        let service = "_\(uniqueService())._tcp"
        let browse = try Child.start("/usr/bin/avahi-browse", ["-rpk", service])
        defer { browse.stop() }
        let started = ContinuousClock.now
        let publish = try Child.start("/usr/bin/avahi-publish", ["-s", "bench", service, "9", "k=v"])
        defer { publish.stop() }
        while !(try browse.readLine()).hasPrefix("=") {}
        return seconds(ContinuousClock.now - started)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
