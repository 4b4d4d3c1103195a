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
/// ChaChaPoly on swift-crypto can reach on this machine.
struct RawSealing {
    /// The fixed 256-bit key of the baseline.
    static let key = SymmetricKey(data: (0..<32).map { UInt8($0) })
    /// The ChaChaPoly tag length.
    static let tagLength = 16

    /// The nonce of the next record in this direction.
    private var counter: UInt64 = 0

    init() {}

    private mutating func nextNonce() -> ChaChaPoly.Nonce {
        let words: (UInt32, UInt32, UInt32) = (
            0,
            UInt32(truncatingIfNeeded: counter).littleEndian,
            UInt32(truncatingIfNeeded: counter >> 32).littleEndian)
        counter &+= 1
        return withUnsafeBytes(of: words) { try! ChaChaPoly.Nonce(data: $0) }
    }

    /// The record plaintext (flags byte and data), reused from record to record.
    private var plaintext: [UInt8] = []

    /// Seals one record, the flags byte followed by `data`, and appends ciphertext ‖ tag to `output`.
    mutating func seal(flags: UInt8, data: ArraySlice<UInt8>, appendingTo output: inout [UInt8]) throws {
        plaintext.removeAll(keepingCapacity: true)
        plaintext.append(flags)
        plaintext.append(contentsOf: data)
        let box = try ChaChaPoly.seal(plaintext, using: Self.key, nonce: nextNonce())
        output.append(contentsOf: box.ciphertext)
        output.append(contentsOf: box.tag)
    }

    /// Opens one record (ciphertext ‖ tag) and returns its plaintext.
    mutating func open(_ record: UnsafeRawBufferPointer) throws -> Data {
        guard record.count >= Self.tagLength else { throw RawSocket.Failure(description: "sealed record shorter than its tag") }
        let split = record.count - Self.tagLength
        let box = try ChaChaPoly.SealedBox(
            nonce: nextNonce(),
            ciphertext: UnsafeRawBufferPointer(rebasing: record[..<split]),
            tag: UnsafeRawBufferPointer(rebasing: record[split...]))
        return try ChaChaPoly.open(box, using: Self.key)
    }
}
