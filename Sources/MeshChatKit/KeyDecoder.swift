/// Decodes the bytes a terminal sends in raw mode into ``TerminalKey``s (pure; no I/O).
///
/// Input arrives in chunks of any size, and a key may be split between two chunks (a
/// multi-byte UTF-8 character, an escape sequence): the decoder keeps an incomplete tail and
/// finishes it with the next chunk, so feeding the bytes one at a time gives the same keys as
/// feeding them all at once (printable text may come in more `.text` pieces).
///
/// What it understands:
/// - UTF-8 text, invalid bytes dropped; C0 and C1 control characters are never text.
/// - CR, LF (CR LF as one) as Enter; DEL and BS as Backspace; Tab; Ctrl-letters.
/// - CSI (`ESC [`) and SS3 (`ESC O`) sequences for the arrows, Home, End, Delete, Page Up/Down,
///   with xterm modifiers (`ESC [1;5C` is Ctrl-Right); several spellings of Home and End.
/// - Alt-letter (`ESC x`) and Alt-Backspace (`ESC DEL`).
/// - Bracketed paste (`ESC [200~` … `ESC [201~`), at most ``maxPasteBytes`` bytes kept.
///
/// Any other escape sequence is consumed whole and ignored, so that its bytes are never
/// inserted as text (one longer than ``maxSequenceLength`` too, up to its final byte). A lone ESC at the end of a chunk waits for the next byte (as in readline,
/// Escape then a letter is that letter with Alt).
public struct KeyDecoder: Sendable {
    /// The longest escape sequence accepted; a longer one is dropped.
    public static let maxSequenceLength = 32
    /// The most bytes of one bracketed paste that are kept; the rest of the paste is dropped.
    public static let maxPasteBytes = 65_536

    private static let pasteEnd: [UInt8] = [0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E]  // ESC [ 2 0 1 ~

    /// Bytes of an unfinished key, kept for the next chunk.
    private var pending: [UInt8] = []
    /// Inside a bracketed paste: the bytes pasted so far.
    private var paste: [UInt8]?
    /// Inside an escape sequence longer than ``maxSequenceLength``: its bytes are dropped up to
    /// and including its final byte.
    private var discarding = false

    /// Creates a decoder with nothing pending.
    public init() {}

    /// Whether an unfinished key or paste waits for more bytes.
    public var hasPendingInput: Bool { !pending.isEmpty || paste != nil || discarding }

    /// Decodes one chunk of input.
    /// - Parameter bytes: the bytes read from the terminal.
    /// - Returns: the keys completed by this chunk, in order.
    public mutating func decode(_ bytes: some Sequence<UInt8>) -> [TerminalKey] {
        pending.append(contentsOf: bytes)
        let input = pending
        var keys: [TerminalKey] = []
        var text = String.UnicodeScalarView()
        func flushText() {
            if !text.isEmpty {
                keys.append(.text(String(text)))
                text = String.UnicodeScalarView()
            }
        }
        var i = 0
        let n = input.count
        scan: while i < n {
            if discarding {
                let byte = input[i]
                if (0x20...0x3F).contains(byte) {
                    i += 1
                    continue
                }
                discarding = false
                if (0x40...0x7E).contains(byte) { i += 1 }
                continue
            }
            if paste != nil {
                if let end = Self.find(Self.pasteEnd, in: input, from: i) {
                    appendPaste(input[i..<end])
                    keys.append(.paste(Self.pastedText(paste ?? [])))
                    paste = nil
                    i = end + Self.pasteEnd.count
                    continue
                }
                // Keep a tail that may be the start of the end marker.
                let keep = Self.markerPrefixLength(input[i..<n])
                appendPaste(input[i..<(n - keep)])
                i = n - keep
                break scan
            }
            let byte = input[i]
            switch byte {
            case 0x1B:
                flushText()
                switch escape(input, at: i) {
                case .incomplete:
                    break scan
                case .consumed(let key, let length):
                    if let key { keys.append(key) }
                    i += length
                case .overlong(let length):
                    discarding = true
                    i += length
                case .pasteStart(let length):
                    paste = []
                    i += length
                }
                continue
            case 0x0D:
                flushText()
                keys.append(.enter)
                i += (i + 1 < n && input[i + 1] == 0x0A) ? 2 : 1
                continue
            case 0x0A:
                flushText()
                keys.append(.enter)
            case 0x09:
                flushText()
                keys.append(.tab)
            case 0x7F, 0x08:
                flushText()
                keys.append(.backspace)
            case 0x01...0x1A:
                flushText()
                keys.append(.control(Character(Unicode.Scalar(byte + 0x60))))
            case 0x00, 0x1C...0x1F:
                flushText()  // Ctrl-@, Ctrl-\, Ctrl-], Ctrl-^, Ctrl-_: no binding
            case 0x20...0x7E:
                text.append(Unicode.Scalar(byte))
            default:
                switch Self.utf8Scalar(input, at: i) {
                case .incomplete:
                    break scan
                case .invalid:
                    i += 1
                    continue
                case .scalar(let scalar, let length):
                    if Self.isPrintable(scalar) { text.append(scalar) }
                    i += length
                    continue
                }
            }
            i += 1
        }
        flushText()
        pending = i < n ? Array(input[i...]) : []
        return keys
    }

    // MARK: Escape sequences

    private enum EscapeResult {
        case incomplete
        case consumed(TerminalKey?, length: Int)
        case pasteStart(length: Int)
        /// Too long: drop these bytes and the rest of the sequence.
        case overlong(length: Int)
    }

    /// Decodes the escape sequence starting at `start` (an ESC byte).
    private func escape(_ input: [UInt8], at start: Int) -> EscapeResult {
        let n = input.count
        guard start + 1 < n else { return .incomplete }
        let next = input[start + 1]
        switch next {
        case 0x5B:  // CSI: ESC [ parameters intermediates final
            var j = start + 2
            if j < n, input[j] == 0x5B {  // ESC [ [ x: the Linux console's function keys
                return j + 1 < n ? .consumed(nil, length: 4) : .incomplete
            }
            while j < n {
                let b = input[j]
                if (0x40...0x7E).contains(b) {
                    return Self.csi(parameters: Array(input[(start + 2)..<j]), final: b, length: j - start + 1)
                }
                guard (0x20...0x3F).contains(b) else { return .consumed(nil, length: j - start) }  // broken: drop it
                if j - start + 1 >= Self.maxSequenceLength { return .overlong(length: j - start + 1) }
                j += 1
            }
            return .incomplete
        case 0x4F:  // SS3: ESC O x
            guard start + 2 < n else { return .incomplete }
            let key: TerminalKey? = switch input[start + 2] {
            case 0x41: .up
            case 0x42: .down
            case 0x43: .right
            case 0x44: .left
            case 0x48: .home
            case 0x46: .end
            case 0x4D: .enter
            default: nil
            }
            return .consumed(key, length: 3)
        case 0x7F, 0x08:
            return .consumed(.altBackspace, length: 2)
        case 0x62:
            return .consumed(.wordLeft, length: 2)
        case 0x66:
            return .consumed(.wordRight, length: 2)
        case 0x20...0x7E:
            return .consumed(.alt(Character(Unicode.Scalar(next))), length: 2)
        default:
            // ESC ESC, ESC and a control or a non-ASCII byte: a lone Escape, then that byte.
            return .consumed(.escape, length: 1)
        }
    }

    /// The key of a complete CSI sequence.
    private static func csi(parameters: [UInt8], final: UInt8, length: Int) -> EscapeResult {
        // Private sequences (`ESC [?…`, `ESC [<…`: replies and mouse reports) are not keys.
        if let first = parameters.first, (0x3C...0x3F).contains(first) { return .consumed(nil, length: length) }
        let fields = String(decoding: parameters, as: UTF8.self).split(separator: ";", omittingEmptySubsequences: false)
        let number = fields.first.flatMap { Int($0) }
        let modifier = fields.count > 1 ? (Int(fields[1]).map { $0 - 1 } ?? 0) : 0
        let altOrCtrl = modifier & 0b110 != 0
        let key: TerminalKey?
        switch final {
        case 0x41: key = .up
        case 0x42: key = .down
        case 0x43: key = altOrCtrl ? .wordRight : .right
        case 0x44: key = altOrCtrl ? .wordLeft : .left
        case 0x48: key = .home
        case 0x46: key = .end
        case 0x7E:
            switch number {
            case 1, 7: key = .home
            case 4, 8: key = .end
            case 3: key = .delete
            case 5: key = .pageUp
            case 6: key = .pageDown
            case 200: return .pasteStart(length: length)
            default: key = nil  // Insert, function keys, a stray paste end
            }
        default:
            key = nil
        }
        return .consumed(key, length: length)
    }

    // MARK: Paste

    private mutating func appendPaste(_ bytes: ArraySlice<UInt8>) {
        guard var kept = paste else { return }
        let room = Self.maxPasteBytes - kept.count
        if room > 0 { kept.append(contentsOf: bytes.prefix(room)) }
        paste = kept
    }

    /// Pasted bytes as text: line breaks (LF, CR, CRLF) become `\n` (trailing ones are dropped),
    /// tabs become spaces, other control characters and invalid UTF-8 are removed. The line
    /// editor sends a paste of several lines one line at a time (``LineEditor``).
    static func pastedText(_ bytes: [UInt8]) -> String {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        let bytes = Array(bytes[..<end])
        var scalars = String.UnicodeScalarView()
        var i = 0
        var lastWasCR = false
        while i < bytes.count {
            switch utf8Scalar(bytes, at: i) {
            case .incomplete, .invalid:
                i += 1
                lastWasCR = false
            case .scalar(let scalar, let length):
                i += length
                defer { lastWasCR = scalar == "\r" }
                if scalar == "\n" && lastWasCR { continue }
                if scalar == "\r" || scalar == "\n" {
                    scalars.append("\n")
                } else if scalar == "\t" {
                    scalars.append(" ")
                } else if isPrintable(scalar) {
                    scalars.append(scalar)
                }
            }
        }
        return String(scalars)
    }

    /// How many bytes at the end of `tail` are a proper prefix of the paste end marker.
    private static func markerPrefixLength(_ tail: ArraySlice<UInt8>) -> Int {
        for length in stride(from: min(pasteEnd.count - 1, tail.count), to: 0, by: -1)
        where tail.suffix(length).elementsEqual(pasteEnd.prefix(length)) {
            return length
        }
        return 0
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count - start >= needle.count else { return nil }
        for i in start...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }

    // MARK: UTF-8

    private enum UTF8Result {
        case incomplete
        case invalid
        case scalar(Unicode.Scalar, length: Int)
    }

    /// Decodes one UTF-8 scalar at `i`, rejecting overlong forms and surrogates.
    private static func utf8Scalar(_ bytes: [UInt8], at i: Int) -> UTF8Result {
        let lead = bytes[i]
        let length: Int
        var value: UInt32
        switch lead {
        case 0x00...0x7F: return .scalar(Unicode.Scalar(lead), length: 1)
        case 0xC2...0xDF: length = 2; value = UInt32(lead & 0x1F)
        case 0xE0...0xEF: length = 3; value = UInt32(lead & 0x0F)
        case 0xF0...0xF4: length = 4; value = UInt32(lead & 0x07)
        default: return .invalid
        }
        for k in 1..<length {
            guard i + k < bytes.count else { return .incomplete }
            let byte = bytes[i + k]
            guard byte & 0xC0 == 0x80 else { return .invalid }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { return .invalid }
        return .scalar(scalar, length: length)
    }

    /// Whether a scalar may be inserted as text: not a control character (C0, DEL, C1) and not a
    /// line or paragraph separator.
    static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate: return false
        default: return true
        }
    }
}
