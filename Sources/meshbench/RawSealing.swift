import Crypto
import Foundation

/// The encrypted variant of the raw-TCP baseline: each frame's body (flags byte and data, at most
/// 65,519 bytes) is sealed with swift-crypto's `ChaChaPoly` by the sender and opened by the
/// receiver, and nothing else is added: no handshake, no envelope, no tasks, no event loop.
///
/// The key is a fixed constant both processes know (this is a measurement, not a secure channel);
/// the nonce is a per-direction counter laid out as Noise lays it out (4 zero bytes, then the
/// counter little-endian), so each record costs exactly one seal and one open, as a Noise
/// transport message does. A frame body is ciphertext ‖ 16-byte tag, at most 65,535 bytes.
///
/// Its ratio to the plain raw baseline is the best any transport that seals every byte with
/// ChaChaPoly on swift-crypto can reach on this machine. With ``Cipher/aesGCM`` the records are
/// sealed with AES-256-GCM instead (the nonce's counter big-endian, as Noise's AESGCM lays it out):
/// the ceiling for a link on protocol version 4's AESGCM suite.
struct RawSealing {
    /// The AEAD that seals the records.
    enum Cipher: String, Sendable {
        case chaChaPoly = "chachapoly"
        case aesGCM = "aesgcm"
    }

    /// The record cipher.
    let cipher: Cipher
    /// The fixed 256-bit key of the baseline.
    static let key = SymmetricKey(data: (0..<32).map { UInt8($0) })
    /// The ChaChaPoly tag length.
    static let tagLength = 16

    /// The nonce of the next record in this direction.
    private var counter: UInt64 = 0

    init(_ cipher: Cipher = .chaChaPoly) { self.cipher = cipher }

    /// The next 12 nonce bytes: 4 zero bytes, then the counter (little-endian for ChaChaPoly,
    /// big-endian for AESGCM, Noise §12.3–12.4).
    private mutating func nextNonceBytes() -> [UInt8] {
        let value = cipher == .chaChaPoly ? counter.littleEndian : counter.bigEndian
        counter &+= 1
        return [0, 0, 0, 0] + withUnsafeBytes(of: value) { Array($0) }
    }

    /// The record plaintext (flags byte and data), reused from record to record.
    private var plaintext: [UInt8] = []

    /// Seals one record, the flags byte followed by `data`, and appends ciphertext ‖ tag to `output`.
    mutating func seal(flags: UInt8, data: ArraySlice<UInt8>, appendingTo output: inout [UInt8]) throws {
        plaintext.removeAll(keepingCapacity: true)
        plaintext.append(flags)
        plaintext.append(contentsOf: data)
        switch cipher {
        case .chaChaPoly:
            let box = try ChaChaPoly.seal(plaintext, using: Self.key, nonce: try ChaChaPoly.Nonce(data: nextNonceBytes()))
            output.append(contentsOf: box.ciphertext)
            output.append(contentsOf: box.tag)
        case .aesGCM:
            let box = try AES.GCM.seal(plaintext, using: Self.key, nonce: try AES.GCM.Nonce(data: nextNonceBytes()))
            output.append(contentsOf: box.ciphertext)
            output.append(contentsOf: box.tag)
        }
    }

    /// Opens one record (ciphertext ‖ tag) and returns its plaintext.
    mutating func open(_ record: UnsafeRawBufferPointer) throws -> Data {
        guard record.count >= Self.tagLength else { throw RawSocket.Failure(description: "sealed record shorter than its tag") }
        let split = record.count - Self.tagLength
        let (ciphertext, tag) = (UnsafeRawBufferPointer(rebasing: record[..<split]), UnsafeRawBufferPointer(rebasing: record[split...]))
        switch cipher {
        case .chaChaPoly:
            let box = try ChaChaPoly.SealedBox(nonce: try ChaChaPoly.Nonce(data: nextNonceBytes()), ciphertext: ciphertext, tag: tag)
            return try ChaChaPoly.open(box, using: Self.key)
        case .aesGCM:
            let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: nextNonceBytes()), ciphertext: ciphertext, tag: tag)
            return try AES.GCM.open(box, using: Self.key)
        }
    }
}
