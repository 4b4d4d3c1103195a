import ArgumentParser
import Crypto
import Foundation

/// `meshbench handshakes`: the `handshakes_per_s` row of `meshbench suite` on its own, beside the
/// X25519 rate and the rate of each public-key operation a handshake makes, measured round by
/// round in one process so that a profile (`perf record -g meshbench handshakes`) or an A/B run of
/// two builds sees only the handshake.
struct HandshakeBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handshakes",
        abstract: "Link handshakes per second on one core, beside X25519, Ed25519 and key generation rates.")

    @Option(help: "Seconds per measurement.") var seconds = 1.0
    @Option(help: "Rounds; each figure is the median of the rounds.") var rounds = 3
    @Flag(help: "Only the handshake rate (for profiles).") var handshakesOnly = false

    func validate() throws {
        guard seconds > 0, rounds >= 1 else { throw ValidationError("--seconds must be positive and --rounds at least 1") }
    }

    func run() throws {
        var figures: [String: [Double]] = [:]
        let order = ["handshakes_per_s", "x25519_ops_per_s", "x25519_keygen_per_s", "ed25519_sign_per_s", "ed25519_verify_per_s"]
        for _ in 1...rounds {
            figures["handshakes_per_s", default: []].append(try HandshakeRate.handshakes(seconds: seconds))
            if handshakesOnly { continue }
            figures["x25519_ops_per_s", default: []].append(try HandshakeRate.x25519(seconds: seconds))
            figures["x25519_keygen_per_s", default: []].append(try HandshakeRate.rate(seconds: seconds) {
                _ = Curve25519.KeyAgreement.PrivateKey()
            })
            let identity = Curve25519.Signing.PrivateKey()
            let message = Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation
            figures["ed25519_sign_per_s", default: []].append(try HandshakeRate.rate(seconds: seconds) {
                _ = try identity.signature(for: message)
            })
            let signature = try identity.signature(for: message), publicKey = identity.publicKey
            figures["ed25519_verify_per_s", default: []].append(try HandshakeRate.rate(seconds: seconds) {
                guard publicKey.isValidSignature(signature, for: message) else { throw HandshakeRate.HandshakeRateError() }
            })
        }
        for key in order {
            guard let values = figures[key] else { continue }
            let sorted = values.sorted()
            let rounded = values.map { String(Int($0.rounded())) }.joined(separator: " ")
            print("\(key) \(Int(sorted[sorted.count / 2].rounded())) (rounds: \(rounded))")
        }
    }
}
