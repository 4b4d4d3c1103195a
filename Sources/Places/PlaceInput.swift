import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The text of one place file, a chunk at a time: read from a file descriptor or from bytes in
/// memory, inflated on the way when it is gzip, and counted against ``LoadLimits/maxTextBytes``.
///
/// A failure (a read error, a broken gzip stream, too much text) ends the stream: ``read(into:)``
/// returns 0 from then on and ``failure`` says why, for the loader to throw in place of whatever
/// the early end made the parser think.
///
/// Not thread-safe: one load uses it from one thread.
final class PlaceInput {
    private enum Source {
        case file(Int32)
        case memory(Data, offset: Int)
        case ended
    }

    private var source: Source
    private var inflater: GzipInflater?
    /// Plain bytes read while looking for the gzip magic, not yet handed out.
    private var pending: [UInt8] = []
    private var text = 0
    /// Whether text past ``LoadLimits/maxTextBytes`` was read (and dropped).
    private var overMaxText = false
    private let maxText: Int
    /// Whether the file is gzip-compressed.
    private(set) var compressed = false
    /// Why the stream ended early, if it did.
    private(set) var failure: PlacesError?

    /// Reads a file.
    /// - Throws: ``PlacesError/Code/unreadable`` when it cannot be opened or read.
    convenience init(path: String, limits: LoadLimits) throws(PlacesError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable("cannot be read: \(String(cString: strerror(errno)))") }
        try self.init(source: .file(fd), limits: limits)
    }

    /// Reads bytes in memory.
    convenience init(data: Data, limits: LoadLimits) throws(PlacesError) {
        try self.init(source: .memory(data, offset: 0), limits: limits)
    }

    private init(source: Source, limits: LoadLimits) throws(PlacesError) {
        self.source = source
        maxText = max(0, limits.maxTextBytes)
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: 2, alignment: 1)
        defer { head.deallocate() }
        var have = 0
        while have < 2 {
            let n = try readRaw(into: UnsafeMutableRawBufferPointer(rebasing: head[have...]))
            if n == 0 { break }
            have += n
        }
        let first = UnsafeRawBufferPointer(rebasing: head[..<have])
        if GzipInflater.isGzip(first) {
            compressed = true
            inflater = try GzipInflater(first: first) { [unowned self] buffer throws(PlacesError) in try self.readRaw(into: buffer) }
        } else {
            pending = Array(first)
        }
    }

    deinit {
        if case .file(let fd) = source { close(fd) }
    }

    private var tooMuchText: PlacesError {
        .tooLarge("the file holds more than \(maxText) bytes of text (the limit for one file)")
    }

    /// Reads text into `buffer`.
    /// - Returns: How many bytes were written; 0 at the end of the text or after a failure.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard failure == nil, !buffer.isEmpty else { return 0 }
        if overMaxText && text == maxText {
            failure = tooMuchText
            return 0
        }
        do throws(PlacesError) {
            var n: Int
            if !pending.isEmpty {
                n = min(pending.count, buffer.count)
                pending.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                pending.removeFirst(n)
            } else if let inflater {
                n = try inflater.read(into: buffer)
            } else {
                n = try readRaw(into: buffer)
            }
            // Exactly maxText bytes are handed out, then the failure: the same at any chunk size.
            if n > maxText - text {
                n = maxText - text
                overMaxText = true
            }
            text += n
            if n == 0 && overMaxText {
                failure = tooMuchText
            }
            return n
        } catch {
            failure = error
            return 0
        }
    }

    /// The file's own bytes (compressed or not).
    private func readRaw(into buffer: UnsafeMutableRawBufferPointer) throws(PlacesError) -> Int {
        switch source {
        case .ended:
            return 0
        case .memory(let data, let offset):
            let n = min(buffer.count, data.count - offset)
            let start = data.startIndex + offset
            data.copyBytes(to: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), from: start..<(start + n))
            source = .memory(data, offset: offset + n)
            return n
        case .file(let fd):
            while true {
                let n = systemRead(fd, buffer.baseAddress, buffer.count)
                if n >= 0 { return n }
                if errno != EINTR { throw .unreadable("cannot be read: \(String(cString: strerror(errno)))") }
            }
        }
    }
}

#if canImport(Glibc)
private let systemRead = Glibc.read
#elseif canImport(Darwin)
private let systemRead = Darwin.read
#endif
