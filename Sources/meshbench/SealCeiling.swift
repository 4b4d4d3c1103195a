import Crypto
import Foundation
import MeshLink
import MeshNoise

/// The sealing ceiling of a transfer across the mesh on this machine, measured in the same run
/// as the transfers: how many bytes a second one core can seal, and one core open, when every
/// chunk is sealed twice, end to end (ChaCha20-Poly1305, the ratchet's AEAD, PROTOCOL.md §19.4)
/// and then on the link (AES-256-GCM when both ends have hardware AES, else ChaCha20-Poly1305,
/// §4.11) — the work a stream's or a resource's sender and receiver cannot avoid, whatever the
/// rest of the data path costs. `Session.send` bulk is sealed once (on the link), so a transfer
/// sealed twice cannot reach it: this figure says how close it can come.
enum SealCeiling {
    /// Bytes per second for `chunkSize`-byte chunks: the slower of the sealing core and the
    /// opening core (they run in parallel, one on each end).
    static func measure(chunkSize: Int, seconds: Double = 0.3) -> Double {
        let chunk = Data((0..<chunkSize).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let endToEnd = SymmetricKey(size: .bits256)
        let link = NoiseCipherState(key: SymmetricKey(size: .bits256), cipher: CipherSuite.hardwareAESAvailable ? .aesGCM : .chaChaPoly)
        var sender = link
        let (sealed, sealSeconds) = timeRepeatedly(for: seconds) {
            let inner = try! ChaChaPoly.seal(chunk, using: endToEnd).combined
            _ = try! sender.encrypt(inner)
        }
        let inner = try! ChaChaPoly.seal(chunk, using: endToEnd)
        let outer = try! link.encrypt(inner.combined, nonce: 0)
        let (opened, openSeconds) = timeRepeatedly(for: seconds) {
            let plain = try! link.decrypt(outer, nonce: 0)
            _ = try! ChaChaPoly.open(ChaChaPoly.SealedBox(combined: plain), using: endToEnd)
        }
        let sealRate = Double(chunkSize * sealed) / sealSeconds
        let openRate = Double(chunkSize * opened) / openSeconds
        return min(sealRate, openRate)
    }
}
