import Foundation
import MeshTestSupport
import Testing

/// `meshbench suite --json` as scripts read it (issue 16's figures): one JSON object with a row for
/// every key and the baselines each row promises. Tiny counts: this checks the shape, never speed.
@Suite("meshbench suite --json", .serialized)
struct BenchSuiteTests {
    /// Every key of issue 16 with the baselines its row must carry.
    static let expected: [String: Set<String>] = [
        "throughput_1mib": ["raw_tcp", "raw_tcp_chachapoly", "raw_tcp_aesgcm", "raw_tcp_aead", "zeromq"],
        "rate_64b": ["raw_tcp", "zeromq"],
        "rtt_p50_64b": ["raw_tcp"],
        "rtt_p99_64b": ["raw_tcp"],
        "rtt_p99_64b_busy": ["raw_tcp"],
        "relay_hop_p50": ["raw_relay"],
        "relay_hop_p50_next": ["raw_relay"],
        "relay_throughput_1mib": ["raw_relay", "raw_relay_aesgcm"],
        "idle_rss_mb": ["raw_sink"],
        "handshakes_per_s": ["x25519_ops_per_s"],
    ]

    /// Runs the suite with tiny counts and the given zeromq script; returns its rows by key.
    static func rows(zeromq script: String) async throws -> [String: [String: Any]] {
        let suite = try ChatProcess(["suite", "--json", "--rounds", "1", "--bulk-mib", "2", "--rate-count", "200",
                                     "--latency-count", "50", "--busy-count", "20", "--zeromq", script],
                                    executable: "meshbench", label: "suite")
        defer { suite.kill9() }
        let line = try await suite.waitForLine(timeout: .seconds(240)) { $0.hasPrefix("{\"rows\"") }
        #expect(try await suite.waitForExit() == 0, "stderr: \(suite.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let rows = try #require(object["rows"] as? [[String: Any]])
        var byKey: [String: [String: Any]] = [:]
        for row in rows {
            let key = try #require(row["key"] as? String)
            #expect(byKey[key] == nil, "\(key) twice")
            byKey[key] = row
        }
        for (key, baselines) in expected {
            let row = try #require(byKey[key], "no row \(key) in \(line)")
            #expect(row["unit"] is String, "\(key)")
            #expect((row["meshchat"] as? Double).map { $0.isFinite } == true, "\(key): \(row)")
            let present = try #require(row["baselines"] as? [String: Any], "\(key)")
            #expect(Set(present.keys) == baselines, "\(key): \(present.keys.sorted())")
        }
        return byKey
    }

    /// A baseline's value: a number, `nil` for JSON null; fails on anything else.
    static func baseline(_ rows: [String: [String: Any]], _ key: String, _ name: String) -> Double?? {
        let value = (rows[key]?["baselines"] as? [String: Any])?[name]
        if value is NSNull { return .some(nil) }
        return (value as? Double).map { .some($0) }
    }

    @Test("every issue 16 key is a row with its baselines; with pyzmq the zeromq baselines are measured rates")
    func everyKey() async throws {
        let script = ChatProcess.packageRoot.appendingPathComponent("scripts/bench-zmq.py").path
        let rows = try await Self.rows(zeromq: script)
        let throughput = Self.baseline(rows, "throughput_1mib", "zeromq"), rate = Self.baseline(rows, "rate_64b", "zeromq")
        #expect(throughput != nil && rate != nil, "zeromq is a number or null")
        if Self.pyzmqInstalled() {
            #expect((throughput ?? nil).map { $0 > 0 } == true, "\(String(describing: throughput))")
            #expect((rate ?? nil).map { $0 > 0 } == true, "\(String(describing: rate))")
        }
        #expect((Self.baseline(rows, "relay_throughput_1mib", "raw_relay") ?? nil).map { $0 > 0 } == true)
        #expect((Self.baseline(rows, "relay_throughput_1mib", "raw_relay_aesgcm") ?? nil).map { $0 > 0 } == true)
        #expect((rows["relay_throughput_1mib"]?["meshchat"] as? Double).map { $0 > 0 } == true)
        let delivered = rows["relay_throughput_1mib"]?["delivered"] as? Double
        #expect(delivered.map { $0 > 0 && $0 <= 1 } == true, "\(String(describing: delivered))")
    }

    @Test("without a working zeromq script the suite still succeeds and its zeromq baselines are null")
    func zeromqMissing() async throws {
        let rows = try await Self.rows(zeromq: "/nonexistent/bench-zmq.py")
        #expect(Self.baseline(rows, "throughput_1mib", "zeromq") == .some(nil))
        #expect(Self.baseline(rows, "rate_64b", "zeromq") == .some(nil))
    }

    /// Whether `python3 -c 'import zmq'` succeeds here.
    static func pyzmqInstalled() -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import zmq"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
