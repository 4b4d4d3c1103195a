import CZlib
import Foundation

/// gzip (RFC 1952) detection and inflation over the system zlib.
enum Gzip {
    /// Whether the bytes start with the gzip magic number 1f 8b.
    static func isGzip(_ data: Data) -> Bool {
        data.count >= 2 && data[data.startIndex] == 0x1f && data[data.startIndex + 1] == 0x8b
    }

    /// Inflates a gzip stream (several concatenated members are read as one).
    /// - Throws: ``PlacesError/Code/badGzip`` naming zlib's message and the byte offset reached.
    static func inflate(_ data: Data) throws(PlacesError) -> Data {
        var output = Data()
        var stream = z_stream()
        // 15 + 16: zlib window, gzip framing only.
        guard czlib_inflate_init2(&stream, 15 + 16) == Z_OK else {
            throw .badGzip("zlib inflateInit2 failed")
        }
        defer { inflateEnd(&stream) }
        let chunk = 1 << 16
        var buffer = [UInt8](repeating: 0, count: chunk)
        let input = [UInt8](data)
        var failure: String?
        input.withUnsafeBufferPointer { inBuf in
            stream.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
            stream.avail_in = uInt(inBuf.count)
            while true {
                let status = buffer.withUnsafeMutableBufferPointer { outBuf -> Int32 in
                    stream.next_out = outBuf.baseAddress
                    stream.avail_out = uInt(chunk)
                    let s = CZlib.inflate(&stream, Z_NO_FLUSH)
                    output.append(outBuf.baseAddress!, count: chunk - Int(stream.avail_out))
                    return s
                }
                if status == Z_STREAM_END {
                    if stream.avail_in == 0 { return }
                    // Another gzip member follows.
                    if inflateReset(&stream) != Z_OK { failure = "zlib inflateReset failed"; return }
                    continue
                }
                if status == Z_OK { continue }
                if status == Z_BUF_ERROR && stream.avail_in == 0 {
                    failure = "gzip stream truncated after \(input.count) bytes"
                    return
                }
                let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                failure = "\(message) at input byte \(input.count - Int(stream.avail_in)) of \(input.count)"
                return
            }
        }
        if let failure { throw .badGzip(failure) }
        return output
    }

    /// The bytes, inflated when they are gzip.
    static func inflatingIfNeeded(_ data: Data) throws(PlacesError) -> Data {
        isGzip(data) ? try inflate(data) : data
    }
}
