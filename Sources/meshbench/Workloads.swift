import Crypto
import Foundation
import MeshSession

/// The bench protocol on top of both transports: the first payload byte says what a message is.
enum Kind: UInt8 {
    case data = 0x44      // "D": counted (and hashed with --verify)
    case ping = 0x50      // "P": echoed back unchanged
    case end = 0x45       // "E": the sink answers with a result
    case result = 0x52    // "R": {"bytes":…, "messages":…, "sha256":…}
}

/// What a sink counted (per sender), or what it received as a resource.
struct SinkResult: Codable {
    var bytes: Int = 0
    var messages: Int = 0
    var sha256: String = ""
    /// A resource's end at the receiver (`finishedReceiving`), CLOCK_MONOTONIC seconds, which every
    /// process on the machine shares; `nil` for messages.
    var finishedAt: Double?
    /// Why a resource failed, or `nil`.
    var failure: String?
}

/// What a source measured; printed as one JSON line.
struct SourceResult: Codable {
    var workload: String
    var transport: String
    var messages: Int
    var bytesPerMessage: Int
    var seconds: Double
    var messagesPerSecond: Double
    var gbitPerSecond: Double
    var p50Microseconds: Double?
    var p99Microseconds: Double?
    var sha256Sent: String?
    var sha256Received: String?
    /// Messages the sink counted (bulk across relays, which may lose some); `nil` when all arrived.
    var messagesReceived: Int?
    /// Resources: the sender's time in `sendResource` before the offer (hashing the file, recording it).
    var prepareSeconds: Double?
}

/// Builds payloads: kind byte + deterministic pattern, so both sides can hash them.
struct PayloadMaker {
    let size: Int
    private var base: [UInt8]

    init(size: Int) {
        self.size = max(size, 1)
        var generator = SplitMix(seed: 20261122)
        base = (0..<max(size, 1)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// The i-th data payload (its second to ninth bytes hold the index, so each one differs).
    func payload(_ index: Int, kind: Kind = .data) -> [UInt8] {
        var bytes = base
        Self.stamp(&bytes, index, kind: kind)
        return bytes
    }

    /// The same payload as `Data`, built with one copy (for the session sources, whose `send`
    /// takes `Data`; converting the array would copy each payload twice).
    func data(_ index: Int, kind: Kind = .data) -> Data {
        var bytes = Data(base)
        Self.stamp(&bytes, index, kind: kind)
        return bytes
    }

    /// Writes the kind into the first byte and the index into the next eight (little-endian).
    private static func stamp<Bytes: MutableCollection<UInt8>>(_ bytes: inout Bytes, _ index: Int, kind: Kind) where Bytes.Index == Int {
        bytes[bytes.startIndex] = kind.rawValue
        var i = UInt64(index)
        for offset in 1..<min(9, bytes.count) {
            bytes[bytes.startIndex + offset] = UInt8(truncatingIfNeeded: i)
            i >>= 8
        }
    }
}

struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Runs `body` once to warm up, then repeatedly for at least `seconds`.
/// - Returns: the iterations timed and the seconds they took.
func timeRepeatedly(for seconds: Double, _ body: () -> Void) -> (iterations: Int, elapsed: Double) {
    body()  // warm-up
    var iterations = 0
    let start = monotonicSeconds()
    var elapsed = 0.0
    repeat {
        body()
        iterations += 1
        elapsed = monotonicSeconds() - start
    } while elapsed < seconds
    return (iterations, elapsed)
}

func hex(_ digest: SHA256.Digest) -> String {
    digest.map { String(format: "%02x", $0) }.joined()
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))
    return sorted[index]
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let data = try! encoder.encode(value)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

/// Reads the resident set size of a process from /proc (kB → bytes).
func residentBytes(pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kb = line.split(separator: " ").compactMap { Int($0) }.first
        return kb.map { $0 * 1024 }
    }
    return nil
}
