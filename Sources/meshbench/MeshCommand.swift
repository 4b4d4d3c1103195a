import ArgumentParser
import Foundation

/// `meshbench mesh`: the mesh benchmarks (relay latency, broadcast cost, route convergence,
/// delivery under flapping links), each figure beside a baseline measured in the same run.
///
/// `meshbench mesh` runs all four and prints their tables to stdout (progress goes to stderr);
/// `meshbench mesh relay|broadcast|convergence|flap` runs one.
struct MeshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mesh",
        abstract: "Mesh benchmarks: relay latency, broadcast cost, convergence, delivery with flapping links.",
        subcommands: [All.self, Relay.self, Broadcast.self, Convergence.self, Flap.self],
        defaultSubcommand: All.self)

    /// All four figures, in order; the relay figure's raw round trip feeds the convergence baseline.
    struct All: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run every mesh benchmark and print the tables.")
        @OptionGroup var relay: RelayLatencyBench.Options
        @OptionGroup var broadcast: BroadcastCostBench.Options
        @OptionGroup var convergence: ConvergenceBench.Options
        @OptionGroup var flap: FlapDeliveryBench.Options

        func run() async throws {
            // Each table is printed as soon as its figure is done.
            let (rows, rawRoundTrip) = try await RelayLatencyBench.run(relay)
            Relay.table(rows, relay).print()
            BroadcastCostBench.run(broadcast).print()
            try await ConvergenceBench.run(convergence, rawRoundTrip: rawRoundTrip).print()
            try await FlapDeliveryBench.run(flap).print()
        }
    }

    /// Figure 1 alone.
    struct Relay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Added round-trip latency per relay hop, beside a raw TCP relay.")
        @OptionGroup var options: RelayLatencyBench.Options

        func run() async throws {
            Self.table(try await RelayLatencyBench.run(options).rows, options).print()
        }

        static func table(_ rows: [MeshRow], _ options: RelayLatencyBench.Options) -> MeshTable {
            MeshTable(
                title: "Added latency per relay hop (64-byte round trips on loopback)",
                subject: "meshchat A—B—C—D", baselineName: "raw TCP relays", rows: rows,
                notes: [
                    "meshchat: four separate processes in a line (`meshbench mesh-ping` as A, `meshbench sink --connect` as B "
                        + "and C, `meshbench sink` as D). A → B is a direct link; A → C (through B) and A → D (through B and C) are "
                        + "routed and sealed end to end (the far node answers the same way). Pings to B, C and D take turns; "
                        + "\(options.count) of each per round after 500 of each unmeasured.",
                    "Baseline: `raw-source` → `raw-sink` (echo) directly, through one `raw-relay` and through two chained "
                        + "`raw-relay`s (byte-forwarding processes: two blocking threads, no parsing, no crypto); same framing, 64-byte messages.",
                    "Per relay traversal = (2-relay − 1-relay) / 2: both paths are sealed end to end, so the difference is one more "
                        + "relay crossed twice. The last row, (1-relay − direct) / 2, also carries the end-to-end sealing and opening "
                        + "at the ends. Percentiles are subtracted (p99 − p99 is not the p99 of the added delay). "
                        + "bench-anchors/NETWORK.md's per-relay figures are per relay per round trip, i.e. twice these.",
                ])
        }
    }

    /// Figure 2 alone.
    struct Broadcast: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Transmissions per broadcast on a grid: source tree vs flooding.")
        @OptionGroup var options: BroadcastCostBench.Options
        func run() async throws { BroadcastCostBench.run(options).print() }
    }

    /// Figure 3 alone.
    struct Convergence: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Route convergence after a link break on a line of sessions.")
        @OptionGroup var options: ConvergenceBench.Options
        func run() async throws { try await ConvergenceBench.run(options, rawRoundTrip: nil).print() }
    }

    /// Figure 4 alone.
    struct Flap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delivery of private lines while 10% of links flap.")
        @OptionGroup var options: FlapDeliveryBench.Options
        func run() async throws { try await FlapDeliveryBench.run(options).print() }
    }
}
