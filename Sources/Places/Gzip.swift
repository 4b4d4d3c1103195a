import CZlib

/// gzip (RFC 1952) inflation over the system zlib, a chunk at a time: the compressed bytes come
/// from a pull function and the text goes into the caller's buffer, so neither the whole file
/// nor the whole text is ever held. Several concatenated members are read as one stream.
///
/// Not thread-safe: one load uses it from one thread.
final class GzipInflater {
    /// Whether the bytes start with the gzip magic number 1f 8b.
    static func isGzip(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b
    }

    /// On the heap: zlib keeps a pointer back to its stream, which must not move.
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var initialised = false
    /// Compressed bytes waiting to be inflated.
    private let input: UnsafeMutableRawBufferPointer
    /// How many compressed bytes the pull function has given so far.
    private var consumed = 0
    private var inputEnded = false
    private var memberEnded = false
    /// An error found after the text before it was handed out: thrown by the next read.
    private var deferred: PlacesError?
    private let pull: (UnsafeMutableRawBufferPointer) throws(PlacesError) -> Int

    /// - Parameters:
    ///   - first: Compressed bytes already read (the start of the stream).
    ///   - pull: Reads more compressed bytes into a buffer, returning how many (0 at the end).
    init(first: UnsafeRawBufferPointer, pull: @escaping (UnsafeMutableRawBufferPointer) throws(PlacesError) -> Int) throws(PlacesError) {
        self.pull = pull
        input = .allocate(byteCount: max(1 << 16, first.count), alignment: 1)
        stream.initialize(to: z_stream())
        // 15 + 16: zlib window, gzip framing only.
        guard czlib_inflate_init2(stream, 15 + 16) == Z_OK else { throw .badGzip("zlib inflateInit2 failed") }
        initialised = true
        input.copyMemory(from: first)
        consumed = first.count
        stream.pointee.next_in = input.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(first.count)
    }

    deinit {
        if initialised { inflateEnd(stream) }
        stream.deallocate()
        input.deallocate()
    }

    /// Inflates into `output`.
    /// - Returns: How many bytes were written; 0 only at the end of the stream.
    /// - Throws: ``PlacesError/Code/badGzip`` naming zlib's message and the compressed byte
    ///   offset reached, or a truncated stream.
    func read(into output: UnsafeMutableRawBufferPointer) throws(PlacesError) -> Int {
        guard let out = output.baseAddress, !output.isEmpty else { return 0 }
        if let deferred { throw deferred }
        while true {
            if stream.pointee.avail_in == 0 && !inputEnded { try refill() }
            if memberEnded {
                if stream.pointee.avail_in == 0 { return 0 }
                // Another gzip member follows.
                guard inflateReset(stream) == Z_OK else { throw .badGzip("zlib inflateReset failed") }
                memberEnded = false
            }
            stream.pointee.next_out = out.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(clamping: output.count)
            let status = inflate(stream, Z_NO_FLUSH)
            let produced = output.count - Int(stream.pointee.avail_out)
            switch status {
            case Z_STREAM_END:
                memberEnded = true
                if produced > 0 { return produced }
            case Z_OK, Z_BUF_ERROR:
                if produced > 0 { return produced }
                if stream.pointee.avail_in == 0 && inputEnded {
                    throw .badGzip("gzip stream truncated after \(consumed) bytes")
                }
                if status == Z_BUF_ERROR && stream.pointee.avail_in != 0 {
                    throw .badGzip("zlib made no progress at input byte \(consumed - Int(stream.pointee.avail_in))")
                }
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                let error = PlacesError.badGzip("\(message) at input byte \(consumed - Int(stream.pointee.avail_in))")
                // The text before the error first, so what a parser sees is the same at any chunk size.
                guard produced == 0 else {
                    deferred = error
                    return produced
                }
                throw error
            }
        }
    }

    private func refill() throws(PlacesError) {
        let n = try pull(input)
        if n == 0 { inputEnded = true }
        consumed += n
        stream.pointee.next_in = input.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(n)
    }
}
