#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A sliding window over a ``PlaceInput``'s text, for parsers that read one record at a time.
///
/// The window holds the text from a *mark* (the start of the record being parsed, set by the
/// parser) to what has been read; ``refill(keepingFrom:)`` drops what is before the mark, shows
/// more after the rest (reading another chunk when all that was read is shown), and refuses to
/// show more than ``LoadLimits/maxRecordBytes`` from the mark (``recordOverflow``). So memory stays
/// at one record and one chunk, whatever the file holds.
///
/// Parsers keep ``bytes`` and ``base`` and read `bytes[offset - base]`; both change on a refill.
/// With ``tracksLines`` the window counts lines over what it drops, so ``position(of:)`` can name
/// the line and column of any offset still held.
///
/// Not thread-safe: one load uses it from one thread.
final class ByteWindow {
    let input: PlaceInput
    let limits: LoadLimits
    /// The text held: offsets ``base`` ..< ``base`` + `bytes.count` of the whole text.
    private(set) var bytes: UnsafeRawBufferPointer
    /// The offset in the whole text of `bytes[0]`.
    private(set) var base = 0
    /// Whether a refill was refused because the record from the mark went over the limit.
    private(set) var recordOverflow = false
    private var storage: UnsafeMutableRawBufferPointer
    /// How many bytes of `storage` were read (``bytes`` shows a prefix of them).
    private var held = 0
    private var lines: LineTracker?
    /// The limits' chunk and record sizes, clamped to 1 byte ... 1 GiB and 1 byte ... 1 TiB (they
    /// are public settable values, and the sums below must not overflow).
    private let chunk: Int
    private let maxRecord: Int

    /// - Parameters:
    ///   - input: Where the text comes from.
    ///   - limits: The record limit and the chunk size.
    ///   - tracksLines: Whether to count lines for ``position(of:)``.
    init(_ input: PlaceInput, limits: LoadLimits, tracksLines: Bool) {
        self.input = input
        self.limits = limits
        chunk = min(max(1, limits.chunkBytes), 1 << 30)
        maxRecord = min(max(1, limits.maxRecordBytes), 1 << 40)
        storage = .allocate(byteCount: chunk, alignment: 1)
        bytes = UnsafeRawBufferPointer(start: storage.baseAddress, count: 0)
        lines = tracksLines ? LineTracker() : nil
    }

    deinit { storage.deallocate() }

    /// Whether lines are counted for ``position(of:)``; set only before any text is dropped.
    var tracksLines: Bool {
        get { lines != nil }
        set { lines = newValue ? (lines ?? LineTracker()) : nil }
    }

    /// Why the text ended early (a read error, broken gzip, too much text), if it did.
    var failure: PlacesError? { input.failure }

    /// Drops the text before `mark` and shows more after it: what was read already, else another
    /// chunk. At most ``LoadLimits/maxRecordBytes`` from the mark are ever shown, however much was
    /// read, so a parser sees the same text (and a record too long at the same byte) whatever the
    /// chunk size.
    /// - Parameter mark: The first offset (in the whole text) that must stay; at least ``base``.
    /// - Returns: Whether more text is shown; false at the end of the text, after a failure, or
    ///   when the record from the mark would go over ``LoadLimits/maxRecordBytes`` (``recordOverflow``).
    func refill(keepingFrom mark: Int) -> Bool {
        let drop = min(max(0, mark - base), bytes.count)
        if drop > 0 {
            lines?.scan(bytes, base: base, upTo: base + drop)
            held -= drop
            if held > 0 { memmove(storage.baseAddress!, storage.baseAddress! + drop, held) }
            base += drop
            bytes = UnsafeRawBufferPointer(start: storage.baseAddress, count: bytes.count - drop)
        }
        if bytes.count >= maxRecord {
            recordOverflow = true
            return false
        }
        var more = held > bytes.count
        if !more {
            if storage.count - held < chunk {
                let grown = UnsafeMutableRawBufferPointer.allocate(
                    byteCount: min(max(storage.count * 2, held + chunk), maxRecord + chunk), alignment: 1)
                grown.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[..<held]))
                storage.deallocate()
                storage = grown
            }
            let n = input.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[held...]))
            held += n
            more = n > 0
        }
        bytes = UnsafeRawBufferPointer(start: storage.baseAddress, count: min(held, maxRecord))
        return more
    }

    /// Reads until `count` bytes from ``base`` are held or the text ends.
    func fill(atLeast count: Int) {
        while bytes.count < min(count, maxRecord) && refill(keepingFrom: base) {}
    }

    /// The 1-based line and byte column of an offset in the whole text, held or just past what is
    /// held (only with `tracksLines`; asked in increasing order, as parsers find things).
    func position(of offset: Int) -> (line: Int, column: Int) {
        guard var tracker = lines else { return (1, offset + 1) }
        tracker.scan(bytes, base: base, upTo: offset)
        lines = tracker
        return (tracker.line, max(1, offset - tracker.lineStart + 1))
    }
}

/// A parser reading a ``ByteWindow``: the text held (cached from the window), the offset of its
/// first byte, the position it reads at in it, and the mark from which text must stay.
protocol WindowReader {
    var window: ByteWindow { get }
    var bytes: UnsafeRawBufferPointer { get set }
    var origin: Int { get set }
    var position: Int { get set }
    var mark: Int { get }
}

extension WindowReader {
    /// Reads more text, keeping what is from ``mark`` on; false at the end of what the window gives.
    mutating func more() -> Bool {
        guard window.refill(keepingFrom: mark) else { return false }
        position -= window.base - origin
        origin = window.base
        bytes = window.bytes
        return true
    }

    /// Whether `count` bytes from the position are held (reading more if need be).
    mutating func has(_ count: Int) -> Bool {
        while bytes.count - position < count {
            if !more() { return false }
        }
        return true
    }
}

/// Counts lines over text seen in order, a piece at a time: LF, CRLF and a lone CR each end a
/// line (a CR ends it, and an LF right after a CR only moves the line's start past itself).
struct LineTracker {
    /// The offset scanned up to.
    private(set) var offset = 0
    /// The 1-based line at ``offset``.
    private(set) var line = 1
    /// Where that line starts.
    private(set) var lineStart = 0
    private var afterCR = false

    /// Scans `bytes` (which start at offset `base`) up to `target` or their end.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, base: Int, upTo target: Int) {
        let end = min(target, base + bytes.count)
        guard offset < end, offset >= base else { return }
        var i = offset - base
        let stop = end - base
        while i < stop {
            let b = bytes[i]
            i += 1
            if b == 0x0D {
                line += 1
                lineStart = base + i
                afterCR = true
            } else {
                if b == 0x0A {
                    if !afterCR { line += 1 }
                    lineStart = base + i
                }
                afterCR = false
            }
        }
        offset = end
    }
}
