import MeshChatKit
import MeshTestSupport
import Testing

/// `KeyDecoder`: terminal bytes to keys, whole, drip-fed and in random chunks.
@Suite("key decoder")
struct KeyDecoderTests {
    /// Decodes `bytes` in chunks of `size` (0: all at once) and merges adjacent text keys.
    static func decode(_ bytes: [UInt8], chunk size: Int = 0) -> [TerminalKey] {
        var decoder = KeyDecoder()
        var keys: [TerminalKey] = []
        if size == 0 {
            keys = decoder.decode(bytes)
        } else {
            var start = 0
            while start < bytes.count {
                keys += decoder.decode(bytes[start..<min(start + size, bytes.count)])
                start += size
            }
        }
        return merged(keys)
    }

    static func decode(_ text: String, chunk size: Int = 0) -> [TerminalKey] {
        decode(Array(text.utf8), chunk: size)
    }

    /// Adjacent `.text` keys as one (how text is split into keys depends on the chunks).
    static func merged(_ keys: [TerminalKey]) -> [TerminalKey] {
        var result: [TerminalKey] = []
        for key in keys {
            if case .text(let more) = key, case .text(let text)? = result.last {
                result[result.count - 1] = .text(text + more)
            } else {
                result.append(key)
            }
        }
        return result
    }

    @Test("printable ASCII and multi-byte UTF-8 are text")
    func text() {
        #expect(Self.decode("hello") == [.text("hello")])
        #expect(Self.decode("héllo wörld ✓ 日本 🇫🇷 👩‍👩‍👧") == [.text("héllo wörld ✓ 日本 🇫🇷 👩‍👩‍👧")])
    }

    static let named: [(String, TerminalKey)] = [
        ("\r", .enter), ("\n", .enter), ("\u{1B}OM", .enter), ("\t", .tab), ("\u{7F}", .backspace), ("\u{08}", .backspace),
        ("\u{1B}[3~", .delete),
        ("\u{1B}[A", .up), ("\u{1B}[B", .down), ("\u{1B}[C", .right), ("\u{1B}[D", .left),
        ("\u{1B}OA", .up), ("\u{1B}OB", .down), ("\u{1B}OC", .right), ("\u{1B}OD", .left),
        ("\u{1B}[H", .home), ("\u{1B}OH", .home), ("\u{1B}[1~", .home), ("\u{1B}[7~", .home),
        ("\u{1B}[F", .end), ("\u{1B}OF", .end), ("\u{1B}[4~", .end), ("\u{1B}[8~", .end),
        ("\u{1B}[5~", .pageUp), ("\u{1B}[6~", .pageDown),
        ("\u{1B}[1;5C", .wordRight), ("\u{1B}[1;5D", .wordLeft), ("\u{1B}[1;3C", .wordRight), ("\u{1B}[1;3D", .wordLeft),
        ("\u{1B}[1;2C", .right), ("\u{1B}[1;5A", .up),
        ("\u{1B}b", .wordLeft), ("\u{1B}f", .wordRight), ("\u{1B}d", .alt("d")), ("\u{1B}\u{7F}", .altBackspace),
        ("\u{01}", .control("a")), ("\u{05}", .control("e")), ("\u{02}", .control("b")), ("\u{06}", .control("f")),
        ("\u{0B}", .control("k")), ("\u{15}", .control("u")), ("\u{17}", .control("w")), ("\u{0C}", .control("l")),
        ("\u{04}", .control("d")), ("\u{03}", .control("c")), ("\u{19}", .control("y")),
    ]

    @Test("Enter, Backspace, Delete, arrows, Home and End in their common forms, Ctrl and Alt keys",
          arguments: named.map { ($0.0, $0.1) })
    func namedKey(_ bytes: String, _ key: TerminalKey) {
        #expect(Self.decode(bytes) == [key], "\(Array(bytes.utf8))")
        // Between text, the key stays one key and the text is untouched.
        #expect(Self.decode("a" + bytes + "b") == [.text("a"), key, .text("b")])
    }

    @Test("CR LF is one Enter; two CRs are two")
    func crlf() {
        #expect(Self.decode("a\r\nb") == [.text("a"), .enter, .text("b")])
        #expect(Self.decode("\r\r") == [.enter, .enter])
    }

    @Test("unknown escape sequences are consumed whole and never become text", arguments: [
        "\u{1B}[15~", "\u{1B}[2~", "\u{1B}[Z", "\u{1B}OP", "\u{1B}[[A", "\u{1B}[?1;2c", "\u{1B}[<0;10;5M", "\u{1B}[12;1R",
        "\u{1B}[201~", "\u{1B}[1;5Q", "\u{1B}[" + String(repeating: "1", count: 60) + "~",
    ])
    func unknownSequences(_ sequence: String) {
        for size in [0, 1, 2, 3] {
            #expect(Self.decode("x" + sequence + "y", chunk: size) == [.text("xy")], "chunk \(size)")
        }
    }

    @Test("control characters other than the bound ones are dropped, not inserted")
    func otherControls() {
        #expect(Self.decode("a\u{00}\u{1C}\u{1D}\u{1E}\u{1F}b") == [.text("ab")])
        #expect(Self.decode("a\u{85}b\u{9B}c") == [.text("abc")])  // C1 NEL and CSI, as UTF-8 (C2 85, C2 9B)
        #expect(Self.decode([0x61, 0xC2, 0x85, 0x62]) == [.text("ab")])
        #expect(Self.decode("a\u{2028}b") == [.text("ab")])
    }

    @Test("invalid UTF-8 is dropped: stray continuation, overlong forms, surrogates, bytes past U+10FFFF")
    func invalidUTF8() {
        #expect(Self.decode([0x61, 0xFF, 0x62]) == [.text("ab")])
        #expect(Self.decode([0x61, 0x80, 0x62]) == [.text("ab")])
        #expect(Self.decode([0x61, 0xC0, 0xAF, 0x62]) == [.text("ab")])
        #expect(Self.decode([0x61, 0xE0, 0x80, 0xAF, 0x62]) == [.text("ab")])
        #expect(Self.decode([0x61, 0xED, 0xA0, 0x80, 0x62]) == [.text("ab")])
        #expect(Self.decode([0x61, 0xF4, 0x90, 0x80, 0x80, 0x62]) == [.text("ab")])
        #expect(Self.decode([0x61, 0xE2, 0x9C, 0x62]) == [.text("ab")])  // truncated ✓ then b
    }

    @Test("a multi-byte character split between reads is completed by the next read")
    func splitCharacter() {
        var decoder = KeyDecoder()
        let check = Array("✓".utf8)
        #expect(decoder.decode([0x61] + check.prefix(1)) == [.text("a")])
        #expect(decoder.hasPendingInput)
        #expect(decoder.decode(check[1..<2]).isEmpty)
        #expect(decoder.decode(check[2...] + [0x62]) == [.text("✓b")])
        #expect(!decoder.hasPendingInput)
    }

    @Test("an escape sequence split between reads is completed by the next read")
    func splitSequence() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(Array("ab\u{1B}".utf8)) == [.text("ab")])
        #expect(decoder.decode(Array("[".utf8)).isEmpty)
        #expect(decoder.decode(Array("1;5".utf8)).isEmpty)
        #expect(decoder.decode(Array("Dc".utf8)) == [.wordLeft, .text("c")])
    }

    @Test("a lone Escape waits for the next byte: a letter makes it Alt, another Escape a lone Escape")
    func loneEscape() {
        var decoder = KeyDecoder()
        #expect(decoder.decode([0x1B]).isEmpty)
        #expect(decoder.hasPendingInput)
        #expect(decoder.decode(Array("x".utf8)) == [.alt("x")])
        #expect(decoder.decode([0x1B, 0x1B]) == [.escape])
        #expect(decoder.decode(Array("[A".utf8)) == [.up])
    }

    @Test("bracketed paste: one key, line breaks as \\n, tabs as spaces, trailing line breaks and controls dropped")
    func paste() {
        #expect(Self.decode("\u{1B}[200~hello\r\nworld\tand\nmore\rend\r\n\u{1B}[201~x") == [.paste("hello\nworld and\nmore\nend"), .text("x")])
        #expect(Self.decode("\u{1B}[200~a\u{1B}[31mb\u{07}c\u{1B}[201~") == [.paste("a[31mbc")])
        #expect(Self.decode("\u{1B}[200~/quit\r\u{1B}[201~") == [.paste("/quit")])
        #expect(Self.decode("\u{1B}[200~\u{1B}[201~") == [.paste("")])
    }

    @Test("a paste longer than maxPasteBytes keeps its first maxPasteBytes bytes")
    func longPaste() {
        let body = String(repeating: "a", count: KeyDecoder.maxPasteBytes + 1000)
        let keys = Self.decode("\u{1B}[200~" + body + "\u{1B}[201~b", chunk: 4096)
        #expect(keys == [.paste(String(repeating: "a", count: KeyDecoder.maxPasteBytes)), .text("b")])
    }

    static let mixed = "hé✓\u{1B}[Dx\u{1B}OH\u{1B}[1;5C日本\u{7F}\u{1B}[3~\r\u{1B}[200~pa✓\r\nste\u{1B}[201~\u{1B}[15~\u{01}\u{1B}b🇫🇷\n"

    @Test("any chunking gives the same keys as one read", arguments: [1, 2, 3, 4, 5, 7, 11, 64])
    func chunking(size: Int) {
        let whole = Self.decode(Self.mixed)
        #expect(whole == [.text("hé✓"), .left, .text("x"), .home, .wordRight, .text("日本"), .backspace, .delete, .enter,
                          .paste("pa✓\nste"), .control("a"), .wordLeft, .text("🇫🇷"), .enter])
        #expect(Self.decode(Self.mixed, chunk: size) == whole)
    }

    @Test("random chunkings with empty reads mixed in give the same keys")
    func randomChunks() {
        let bytes = Array(Self.mixed.utf8)
        let whole = Self.decode(bytes)
        var generator = SplitMix64(seed: 42)
        for _ in 0..<200 {
            var decoder = KeyDecoder()
            var keys: [TerminalKey] = []
            var start = 0
            while start < bytes.count {
                let size = Int.random(in: 0...6, using: &generator)
                keys += decoder.decode(bytes[start..<min(start + size, bytes.count)])
                start += size
            }
            #expect(Self.merged(keys) == whole)
        }
    }
}
