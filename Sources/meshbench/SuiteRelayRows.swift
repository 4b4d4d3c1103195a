import Foundation

/// The relay rows of `meshbench suite` (issue 16): one meshchat relay beside `raw-relay`.
///
/// - `relay_hop_p50` (µs): what one relay adds to the 64-byte round trip's p50, the relayed
///   round trip minus the direct one. meshchat: `mesh-ping` (A) on the line of
///   ``RelayLatencyBench/startMeshLine(_:)`` (A—B—C—D), C's p50 minus B's (C is reached through B
///   and sealed end to end, so this includes that sealing). Baseline: `raw-source` to the suite's
///   raw echo sink through one `raw-relay`, minus the same without it.
/// - `relay_hop_p50_next` (µs): what a second relay adds (D's p50 minus C's; through two chained
///   `raw-relay`s minus one): both trips are sealed end to end, so this is the relay's own cost,
///   without the sealing at the ends that the first row carries.
/// - `relay_throughput_1mib` (Gbit/s): bulk through one relay. Baselines: `raw-source` 1 MiB
///   messages through the `raw-relay` (`raw_relay`), and `raw-source --aesgcm` through a
///   `raw-relay --aesgcm` to `raw-sink --aesgcm` (`raw_relay_aesgcm`: every frame sealed by the
///   source, opened and sealed again by the relay, opened by the sink, AES-256-GCM with nothing
///   else: the ceiling of a relay that must open and seal every packet on its two links, which
///   meshchat's does, besides the end-to-end sealing at A and C). meshchat: `source --hops 2` through B to C with the same
///   bytes in ``TransferBench/relayedMessageSize`` messages (a relayed payload is at most 64,000
///   bytes, so 1 MiB messages cannot cross a relay). A relayed send waits for room on the first
///   hop's link and the relay holds the sender's link while its packets fill its share of the next
///   hop's (PROTOCOL.md §13.11); the figure counts what arrived, and the row says which share did.
struct SuiteRelayRows {
    /// The `raw-relay` in front of the echo sink, a second one in front of it, and the sealing one
    /// in front of the AES-GCM sink.
    private let rawRelays: [Child]
    private let relayPort: Int, relay2Port: Int, aesRelayPort: Int
    private let sinks: [Child]
    private let bPort: Int
    /// Per round: added p50 (µs), meshchat and raw.
    private var hopMesh: [Double] = [], hopRaw: [Double] = []
    /// Per round: p50 added by a second relay (µs), meshchat and raw.
    private var nextHopMesh: [Double] = [], nextHopRaw: [Double] = []
    /// Per round: Gbit/s through one relay, meshchat and raw, and the share of messages that arrived.
    private var throughputMesh: [Double] = [], throughputRaw: [Double] = [], delivered: [Double] = []
    /// Per round: Gbit/s through the sealing `raw-relay` (AES-GCM at every end).
    private var throughputRawAEAD: [Double] = []

    private init(rawRelays: [Child], relayPort: Int, relay2Port: Int, aesRelayPort: Int, sinks: [Child], bPort: Int) {
        self.rawRelays = rawRelays
        self.relayPort = relayPort
        self.relay2Port = relay2Port
        self.aesRelayPort = aesRelayPort
        self.sinks = sinks
        self.bPort = bPort
    }

    /// Starts two chained `raw-relay`s in front of the raw echo sink at `echoPort`, a sealing one in
    /// front of the AES-GCM sink at `aesPort`, and the meshchat line.
    static func start(_ me: String, echoPort: Int, aesPort: Int) throws -> SuiteRelayRows {
        var rawRelays: [Child] = []
        do {
            var ports: [Int] = []
            for _ in 0..<2 {
                let relay = try Child.start(me, ["raw-relay", "--to", "\(ports.last ?? echoPort)"])
                rawRelays.append(relay)
                ports.append(try relay.readPort())
            }
            let aesRelay = try Child.start(me, ["raw-relay", "--to", "\(aesPort)", "--aesgcm"])
            rawRelays.append(aesRelay)
            let aesRelayPort = try aesRelay.readPort()
            let (sinks, bPort) = try RelayLatencyBench.startMeshLine(me)
            return SuiteRelayRows(rawRelays: rawRelays, relayPort: ports[0], relay2Port: ports[1], aesRelayPort: aesRelayPort,
                                  sinks: sinks, bPort: bPort)
        } catch {
            for relay in rawRelays { relay.stop() }
            throw error
        }
    }

    /// Stops every process this started.
    func stop() {
        for relay in rawRelays { relay.stop() }
        for sink in sinks { sink.stop() }
    }

    /// Measures one round of both rows, with the suite's counts (`--latency-count`, `--bulk-mib`).
    mutating func measureRound(suite: Suite, _ me: String, echoPort: Int) async throws {
        let rawDirect = try RelayLatencyBench.rawLatency(me, port: echoPort, count: suite.latencyCount)
        let rawRelayed = try RelayLatencyBench.rawLatency(me, port: relayPort, count: suite.latencyCount)
        let rawFar = try RelayLatencyBench.rawLatency(me, port: relay2Port, count: suite.latencyCount)
        let ping = try RelayLatencyBench.meshPing(me, port: bPort, count: suite.latencyCount)
        hopRaw.append(rawRelayed.0 - rawDirect.0)
        hopMesh.append(ping.relayedP50 - ping.directP50)
        nextHopRaw.append(rawFar.0 - rawRelayed.0)
        nextHopMesh.append(ping.farP50 - ping.relayedP50)

        throughputRaw.append(try await suite.source(me, .raw, relayPort, .bulk, count: suite.bulkMiB, size: 1 << 20).gbitPerSecond)
        throughputRawAEAD.append(try await suite.source(me, .aesGCM, aesRelayPort, .bulk, count: suite.bulkMiB, size: 1 << 20).gbitPerSecond)
        let size = TransferBench.relayedMessageSize
        let count = max(1, suite.bulkMiB * (1 << 20) / size)
        let mesh = try await suite.source(me, .mesh, bPort, .bulk, count: count, size: size, hops: 2)
        throughputMesh.append(mesh.gbitPerSecond)
        delivered.append(Double(mesh.messagesReceived ?? count) / Double(count))
    }

    /// The rows for `suite --json`.
    func jsonRows(_ median: ([Double]) -> Double) -> [[String: Any]] {
        [
            ["key": "relay_hop_p50", "unit": "µs", "meshchat": median(hopMesh), "baselines": ["raw_relay": median(hopRaw)]],
            ["key": "relay_hop_p50_next", "unit": "µs", "meshchat": median(nextHopMesh), "baselines": ["raw_relay": median(nextHopRaw)]],
            ["key": "relay_throughput_1mib", "unit": "Gbit/s", "meshchat": median(throughputMesh),
             "baselines": ["raw_relay": median(throughputRaw), "raw_relay_aesgcm": median(throughputRawAEAD)],
             "delivered": median(delivered)],
        ]
    }

    /// The rows for the suite's table (same columns: the baseline goes in the raw TCP column).
    func tableRows(_ median: ([Double]) -> Double, _ format: (Double) -> String) -> [String] {
        let (hop, rawHop) = (median(hopMesh), median(hopRaw))
        let (next, rawNext) = (median(nextHopMesh), median(nextHopRaw))
        let (through, rawThrough, aeadThrough) = (median(throughputMesh), median(throughputRaw), median(throughputRawAEAD))
        let ratio = { (a: Double, b: Double) in String(format: "%.2f×", b > 0 ? a / b : 0) }
        return [
            "| round trip added by one relay, p50 (relayed − direct; meshchat's relayed trip is sealed end to end) | "
                + "\(format(hop)) µs | — | \(format(rawHop)) µs (raw-relay) | \(ratio(hop, rawHop)) | — | ≤ 2× raw-relay |",
            "| round trip added by a second relay, p50 (2-relay − 1-relay: the relay's own cost, both sealed end to end) | "
                + "\(format(next)) µs | — | \(format(rawNext)) µs (2 chained raw-relays − 1) | \(ratio(next, rawNext)) | — | — |",
            "| throughput through one relay (meshchat: \(TransferBench.relayedMessageSize)-byte messages, "
                + "\(String(format: "%.0f", median(delivered) * 100))% arrived; raw: 1 MiB) | \(format(through)) Gbit/s | — | "
                + "\(format(rawThrough)) Gbit/s (raw-relay); \(format(aeadThrough)) Gbit/s (raw-relay + AES-GCM at every end) | "
                + "\(ratio(through, rawThrough)); \(ratio(through, aeadThrough)) of the AES-GCM ceiling | — | ≥ 0.5× raw-relay |",
        ]
    }
}
