import ArgumentParser
import Foundation

/// `meshbench store-write`: what storing one pair's end-to-end sessions costs on the packet path
/// (issue 16), as the system calls the two ways do, interleaved in one run on one file system:
///
/// - baseline, session 16's `EndToEndStore.write`: open `NODE.new` with `O_CREAT|O_TRUNC`, write,
///   `fchmod`, close, rename over `NODE` (on ext4 the rename over an existing file starts writeback
///   of the new one, auto_da_alloc);
/// - `SessionFiles.write` (session 17): one `pwrite` of the record into the older of the file's
///   two slots on a descriptor kept open, plus the `fstat` that checks the file is still linked.
///
/// Both write the same bytes (a record of `--size` bytes, the few hundred of a usual pair); neither
/// syncs (a kill -9 cannot lose what is in the page cache; power loss is not the guarantee). The
/// syscalls are copied here rather than called (the store's types are internal to MeshSession).
struct StoreWriteBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store-write", abstract: "Cost of one end-to-end session store: replace by rename vs pwrite in place.")

    @Option(help: "Directory for the files (its file system is what is measured).") var directory: String?
    @Option(help: "Bytes per store.") var size = 640
    @Option(help: "Stores per round and way.") var count = 2_000
    @Option(help: "Rounds, alternating the two ways; the median of the round p50s is reported.") var rounds = 5

    func run() throws {
        let base = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("meshbench-store-write-\(getpid())").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: base) } }
        let bytes = [UInt8](repeating: 0x5A, count: size)
        let renamePath = base + "/rename", inPlacePath = base + "/in-place"
        _ = Self.replaceByRename(bytes, renamePath)
        let descriptor = open(inPlacePath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ValidationError("store-write: cannot open \(inPlacePath): errno \(errno)") }
        defer { close(descriptor) }
        var renameP50: [Double] = [], inPlaceP50: [Double] = [], renameP99: [Double] = [], inPlaceP99: [Double] = []
        var slot = 0
        for _ in 0..<rounds {
            var samples: [Double] = []
            for _ in 0..<count { samples.append(Self.timed { _ = Self.replaceByRename(bytes, renamePath) }) }
            samples.sort()
            renameP50.append(percentile(samples, 0.5))
            renameP99.append(percentile(samples, 0.99))
            samples = []
            for _ in 0..<count {
                samples.append(Self.timed {
                    var status = stat()
                    _ = fstat(descriptor, &status)
                    _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(16 + slot * 4_096)) }
                    slot = 1 - slot
                })
            }
            samples.sort()
            inPlaceP50.append(percentile(samples, 0.5))
            inPlaceP99.append(percentile(samples, 0.99))
        }
        let (rename50, place50) = (median(renameP50), median(inPlaceP50))
        print("| one store of \(size) bytes (\(rounds) rounds × \(count), median of round p50s) | in place (pwrite) | baseline: replace by rename | ratio |")
        print("|---|---|---|---|")
        print(String(format: "| p50 µs | %.1f | %.1f | %.3f× |", place50, rename50, rename50 > 0 ? place50 / rename50 : 0))
        print(String(format: "| p99 µs | %.1f | %.1f | %.3f× |", median(inPlaceP99), median(renameP99),
                     median(renameP99) > 0 ? median(inPlaceP99) / median(renameP99) : 0))
        print("round p50s µs: in place \(inPlaceP50.map { String(format: "%.1f", $0) }.joined(separator: ", ")); "
              + "rename \(renameP50.map { String(format: "%.1f", $0) }.joined(separator: ", "))")
    }

    /// Session 16's store: a new file by `O_TRUNC`, renamed over the old one.
    static func replaceByRename(_ bytes: [UInt8], _ path: String) -> Bool {
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count
        _ = fchmod(descriptor, 0o600)
        close(descriptor)
        return written && rename(temporary, path) == 0
    }

    /// Microseconds `body` took.
    static func timed(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000
    }
}
