import struct Foundation.Data

/// Splits one fuzz input into several values, so that one input can drive several inputs of a
/// decoder or a state machine. Reading past the end gives zeros and empty slices.
struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been read.
    var isAtEnd: Bool { position >= bytes.count }

    /// The next byte, or 0.
    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next `count` bytes, fewer at the end.
    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + max(0, count))
        defer { position = end }
        return position < end ? Array(bytes[position..<end]) : []
    }

    /// A chunk: a length byte, then that many bytes.
    mutating func chunk() -> [UInt8] { bytes(Int(byte())) }

    /// A chunk with a two-byte big-endian length.
    mutating func longChunk() -> Data { Data(bytes(Int(byte()) << 8 | Int(byte()))) }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] { bytes(bytes.count - position) }
}
