import ArgumentParser
import Foundation
import Places

#if canImport(Glibc)
import Glibc
#endif

/// `meshbench places-resident`: loads and indexes one data set, answers one query, and prints
/// `{"places":N,"vmRSS":BYTES,"vmHWM":BYTES}` from /proc/self/status; with `--empty` it loads
/// nothing (the bare process, the baseline). Run by `meshbench places` in a fresh process with
/// the default heap and no NIO executor, as a plain program would run.
struct PlacesResident: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places-resident", abstract: "Load and index a place data set, then print this process's VmRSS and VmHWM.",
        shouldDisplay: false)

    @Option(help: "The data set (GeoJSON, gzipped GeoJSON or CSV).") var data: String?
    @Flag(help: "Load nothing: the bare process.") var empty = false

    func run() throws {
        var count = 0
        var set: PlaceDataSet?
        if !empty, let data {
            set = try PlaceDataSet.load(contentsOf: URL(fileURLWithPath: data))
            count = set!.index.nearest(to: Coordinate(latitude: 51.5, longitude: -0.12), k: 10).count > 0 ? set!.index.count : 0
        }
        // Read while the data set is certainly alive (ARC may end a value's life after its last use).
        let status = withExtendedLifetime(set) { (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? "" }
        func field(_ name: String) -> Int {
            for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
                return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
            }
            return 0
        }
        print("{\"places\":\(count),\"vmRSS\":\(field("VmRSS")),\"vmHWM\":\(field("VmHWM"))}")
    }
}

/// Resident-memory figures of a child process.
enum PlacesMemory {
    /// Runs `meshbench places-resident` in a fresh process and reads its JSON line.
    static func resident(meshbench: String, arguments: [String]) throws -> (rss: Double, hwm: Double) {
        var environment = ProcessInfo.processInfo.environment
        environment["MESHBENCH_DEFAULT_HEAP"] = "1"
        environment["MESHBENCH_NO_EXECUTOR"] = "1"
        let child = try Child.start(meshbench, ["places-resident"] + arguments, environment: environment)
        let line = try child.readLine()
        child.process.waitUntilExit()
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let rss = object["vmRSS"] as? Int, let hwm = object["vmHWM"] as? Int
        else { throw ValidationError("places-resident printed \(line)") }
        return (Double(rss), Double(hwm))
    }

    /// Runs a command to completion under GNU time (stdout and stderr to /dev/null) and returns
    /// its exit status and peak resident memory in bytes (`%M`); nil without `/usr/bin/time`.
    ///
    /// Not `wait4`'s `ru_maxrss` on a child spawned from here: Linux carries the high-water mark
    /// of the address space a process had before `exec` into it, so a `posix_spawn`ed child
    /// reports this (large) process's peak. GNU time forks its child from its own small process.
    static func peak(_ arguments: [String]) throws -> (status: Int32, bytes: Double)? {
        let time = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: time) else { return nil }
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("places-peak-\(getpid()).txt").path
        defer { unlink(report) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([time, "-f", "%M", "-o", report] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, time, &actions, nil, argv, environ)
        guard spawned == 0 else { throw ValidationError("could not start \(time): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        guard let kilobytes = text.split(whereSeparator: \.isNewline).last.flatMap({ Double($0) }) else { return nil }
        return ((status >> 8) & 0xff, kilobytes * 1024)
    }
}
