import ArgumentParser
import Crypto
import Foundation
import MeshLink
import MeshRatchet
import MeshWire

/// The end-to-end cost of one 64-byte private line on one core, sealed by the sender and opened by
/// the recipient (issue 15's figure): protocol version 2's one-shot `Noise_X` sealing (``Sealing``,
/// kept in this target only as the baseline; five X25519 operations per line) beside the Double Ratchet (§19) — lines in one direction (a hash chain step
/// each, no public-key operation) and strict ping-pong (a Diffie-Hellman ratchet step on every
/// line, the worst case) — and the X3DH agreement that starts a session. Same run, same core.
struct RatchetBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ratchet", abstract: "End-to-end seal+open cost of a 64-byte line: Noise_X sealing vs the Double Ratchet.")

    @Option(help: "Seconds per measurement.") var seconds = 1.0
    @Option(help: "Bytes per line.") var lineSize = 64
    @Option(help: "Measure only the rows whose label contains this text (the Noise_X baseline always runs).") var only: String?
    @Option(help: "64-byte private-line round trips across one relay (meshbench sink processes on loopback); 0 skips the row.")
    var relayCount = 3000

    func run() throws {
        let line = Data(repeating: 0x61, count: lineSize)
        let alice = try LocalIdentity.generate(), bob = try LocalIdentity.generate()
        var payload = Meshchat_V1_Data()
        payload.payload = line
        let header = SealHeader(origin: alice.nodeID, destination: bob.nodeID, packetID: Data(count: 16))
        let known = alice.staticKey.publicKey
        let noise = measure {
            let sealed = try! Sealing.seal(.data(payload), displayName: "alice", sealedAtMilliseconds: 1, header: header,
                                           recipientStaticKey: bob.staticKey.publicKey, identity: alice)
            _ = try! Sealing.open(sealed, header: header, identity: bob, knownStaticKey: known)
        }
        print(row("Noise_X seal+open (version 2)", noise, baseline: noise))

        var rng = SystemRandomNumberGenerator()
        let prekey = Curve25519.KeyAgreement.PrivateKey()
        func session() throws -> (DoubleRatchet, DoubleRatchet) {
            let ephemeral = Curve25519.KeyAgreement.PrivateKey()
            let initiated = try PrekeyAgreement.initiate(identity: alice.staticKey, responderIdentity: bob.staticKey.publicKey,
                                                         responderPrekey: prekey.publicKey, ephemeral: ephemeral)
            let responded = try PrekeyAgreement.respond(identity: bob.staticKey, prekey: prekey,
                                                        initiatorIdentity: alice.staticKey.publicKey,
                                                        initiatorEphemeral: ephemeral.publicKey)
            let a = try DoubleRatchet(initiatorSecret: initiated.secret, responderRatchetKey: prekey.publicKey,
                                      associatedData: initiated.associatedData, using: &rng)
            return (a, DoubleRatchet(responderSecret: responded.secret, ratchetKey: prekey, associatedData: responded.associatedData))
        }
        func wanted(_ label: String) -> Bool { only.map { label.contains($0) } ?? true }
        var (a, b) = try session()
        if wanted("one direction") {
            let oneWay = measure {
                let message = try! a.encrypt(line, additionalData: header.packetID)
                _ = try! b.decrypt(message, additionalData: header.packetID, using: &rng)
            }
            print(row("ratchet, one direction (chain step per line)", oneWay, baseline: noise))
        }
        (a, b) = try session()
        _ = try b.decrypt(a.encrypt(line), using: &rng)
        var turn = false
        if wanted("ping-pong") {
            let pingPong = measure {
                turn.toggle()
                if turn {
                    _ = try! a.decrypt(b.encrypt(line), using: &rng)
                } else {
                    _ = try! b.decrypt(a.encrypt(line), using: &rng)
                }
            }
            print(row("ratchet, ping-pong (DH ratchet step per line)", pingPong, baseline: noise))
        }
        var sealedPacket: Cost?
        if wanted("sealed packet") || (wanted("relay") && relayCount > 0) {
            // The whole path of a line (§13.6, §19.6): the Sealed plaintext, the ratchet
            // packet bound to its routed header, and the open with its checks; one direction. Until
            // bob replies, alice's packets are prekey messages (prekey header, identity fields inside).
            var pair = try SealedPair(alice: alice, bob: bob, header: header, payload: payload, using: &rng)
            let packet = measure { pair.line(using: &rng) }
            print(row("sealed packet, one direction (§19.6, all of it)", packet, baseline: noise))
            sealedPacket = packet
            // After one reply the session is established and alice sends session messages.
            try pair.reply(using: &rng)
            let established = measure { pair.line(using: &rng) }
            print(row("  the same, established session (after a reply)", established, baseline: noise))
        }
        if wanted("X3DH") {
            let agreement = measure { _ = try! session() }
            print(row("X3DH agreement, both ends (first contact)", agreement, baseline: noise))
        }
        print("goal (issue 15): no public-key operation per line in an established session, ≤ 10 µs per line on one core")
        if wanted("relay"), relayCount > 0, let sealedPacket {
            try relayRoundTrip(sealedPacket: sealedPacket.wall, noise: noise.wall)
        }
    }

    /// Two nodes' sessions for the sealed-packet rows: alice seals lines for bob on the sealed-packet path (§19.6).
    private struct SealedPair {
        let alice: LocalIdentity, bob: LocalIdentity
        let header: SealHeader
        let payload: Meshchat_V1_Data
        let bobPrekey = Curve25519.KeyAgreement.PrivateKey()
        let keys: PairSessions.PeerKeys
        var senders = PairSessions(), receivers = PairSessions()

        /// Sessions after alice's first line (a prekey message) reached bob.
        init(alice: LocalIdentity, bob: LocalIdentity, header: SealHeader, payload: Meshchat_V1_Data,
             using rng: inout some RandomNumberGenerator) throws {
            (self.alice, self.bob, self.header, self.payload) = (alice, bob, header, payload)
            keys = PairSessions.PeerKeys(staticKey: bob.staticKey.publicKey, prekeyID: 1, prekey: bobPrekey.publicKey)
            line(using: &rng)
        }

        /// One line from alice to bob, sealed and opened.
        mutating func line(using rng: inout some RandomNumberGenerator) {
            let sealed = try! RatchetSealing.seal(.data(payload), displayName: "alice", sealedAtMilliseconds: 1, header: header,
                                                  sessions: &senders, peer: keys, identity: alice, using: &rng)
            let prekey = bobPrekey
            receivers = try! RatchetSealing.open(sealed.packet, header: header, sessions: receivers, identity: bob,
                                                 prekey: { _ in prekey }, knownStaticKey: alice.staticKey.publicKey,
                                                 using: &rng).sessions
        }

        /// One line from bob to alice, after which alice's session is established (§19.6).
        mutating func reply(using rng: inout some RandomNumberGenerator) throws {
            let back = SealHeader(origin: bob.nodeID, destination: alice.nodeID, packetID: header.packetID)
            let sealed = try RatchetSealing.seal(.data(payload), displayName: "bob", sealedAtMilliseconds: 1, header: back,
                                                 sessions: &receivers, peer: nil, identity: bob, using: &rng)
            senders = try RatchetSealing.open(sealed.packet, header: back, sessions: senders, identity: alice,
                                              prekey: { _ in nil }, knownStaticKey: bob.staticKey.publicKey, using: &rng).sessions
        }
    }

    /// Issue 15's second figure: a private line's round trip across one relay, A→B→C→B→A, on the
    /// real sealed-packet path (``RelayPingCommand``'s relayed pings: sealed end to end by A, relayed
    /// by B, opened and echoed sealed by C, opened by A; loopback TCP, one process per node). The
    /// version 2 baseline is not a second mesh (the session no longer seals with `Noise_X`): it is
    /// the measured round trip plus twice (a ping and its echo) the difference between `Noise_X`
    /// seal+open and the sealed packet's seal+open, both measured above in this run.
    private func relayRoundTrip(sealedPacket: Double, noise: Double) throws {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let (sinks, bPort) = try RelayLatencyBench.startMeshLine(me)
        defer { for sink in sinks { sink.stop() } }
        let ping = try RelayLatencyBench.meshPing(me, port: bPort, count: relayCount)
        let difference = 2 * (noise - sealedPacket) * 1e6
        func line(_ label: String, _ p50: Double, _ p99: Double) -> String {
            label.padding(toLength: 50, withPad: " ", startingAt: 0) + String(format: " %9.1f µs p50  %9.1f µs p99", p50, p99)
        }
        print("private-line round trip across one relay, A→B→C→B→A (\(relayCount) round trips, 64 bytes):")
        print(line("ratchet (version 6), measured", ping.relayedP50, ping.relayedP99))
        print(line("with Noise_X sealing (+ 2 × seal+open difference)", ping.relayedP50 + difference, ping.relayedP99 + difference))
        print(line("for scale: to the neighbour, A→B→A (link only)", ping.directP50, ping.directP99))
    }

    /// The cost of one operation: wall-clock seconds, and the seconds of CPU this thread spent (the
    /// figure that holds on a busy machine, where the wall clock also counts other processes' turns).
    struct Cost {
        var wall: Double
        var cpu: Double
    }

    /// Seconds per operation.
    private func measure(_ body: () -> Void) -> Cost {
        let cpuStart = threadCPUSeconds()
        let (iterations, elapsed) = timeRepeatedly(for: seconds, body)
        // timeRepeatedly runs `body` once more to warm up.
        return Cost(wall: elapsed / Double(iterations), cpu: (threadCPUSeconds() - cpuStart) / Double(iterations + 1))
    }

    private func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    private func row(_ label: String, _ cost: Cost, baseline: Cost) -> String {
        label.padding(toLength: 50, withPad: " ", startingAt: 0)
            + String(format: " %9.2f µs/line  %6.3f× Noise_X  (CPU %8.2f µs, %6.3f×)", cost.wall * 1e6, cost.wall / baseline.wall,
                     cost.cpu * 1e6, cost.cpu / baseline.cpu)
    }
}
