import ArgumentParser
import Foundation

/// `meshbench idle`: the `idle_rss_mb` row of `meshbench suite` on its own, for one or more
/// meshchat binaries measured in turn round by round (an A/B comparison of two builds), with
/// where each process's resident pages are (`/proc/PID/smaps`, per mapped file) when asked.
struct IdleBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle", abstract: "Idle RSS of meshchat binaries with one peer connected, interleaved round by round.")

    @Option(help: "A meshchat binary to measure (repeat for an A/B run; default: the one beside meshbench).")
    var meshchat: [String] = []
    @Option(help: "Rounds; each binary's figure is the median of the rounds.") var rounds = 3
    @Flag(help: "Also print the resident kB per mapping (file, or [anon], [heap], [stack]) of the last round.") var smaps = false

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
    }

    func run() throws {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let binaries = meshchat.isEmpty ? [me.deletingLastPathComponent().appendingPathComponent("meshchat").path] : meshchat
        var figures = [[Double]](repeating: [], count: binaries.count)
        var mappings = [[(String, Int)]](repeating: [], count: binaries.count)
        for round in 1...rounds {
            for (index, binary) in binaries.enumerated() {
                let bytes = try IdleMeasurement.measure(meshchat: binary) { pid in
                    if smaps, round == rounds { mappings[index] = Self.residentPerMapping(pid: pid) }
                }
                figures[index].append(Double(bytes) / 1_048_576)
            }
        }
        for (index, binary) in binaries.enumerated() {
            let sorted = figures[index].sorted()
            let rounds = figures[index].map { String(format: "%.1f", $0) }.joined(separator: " ")
            print(String(format: "idle_rss_mb %.1f", sorted[sorted.count / 2]) + " (rounds: \(rounds)) \(binary)")
            for (name, kB) in mappings[index] where kB >= 100 {
                print(String(format: "  %7.1f MB  %@", Double(kB) / 1024, name))
            }
        }
    }

    /// Resident kB per mapped file (or kind of anonymous mapping), largest first.
    static func residentPerMapping(pid: Int32) -> [(String, Int)] {
        // read(2) to the end: String(contentsOfFile:) gave only the first mappings of this file (its size reads as 0).
        let fd = open("/proc/\(pid)/smaps", O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        var totals: [String: Int] = [:]
        var current = "[anon]"
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), first.first?.isHexDigit == true {
                let path = fields.count >= 6 ? fields[5...].joined(separator: " ") : "[anon]"
                let perms = fields.count > 1 ? String(fields[1]) : ""
                current = "\((path as NSString).lastPathComponent) \(perms)"
            } else if fields.first == "Rss:", fields.count >= 2, let kB = Int(fields[1]) {
                totals[current, default: 0] += kB
            }
        }
        return totals.sorted { $0.value > $1.value }
    }
}
