import Foundation
import MeshChatKit
import MeshTestSupport
import Testing

/// The input history kept across sessions: what may be written, the file format, and the file.
@Suite("input history file")
struct InputHistoryFileTests {
    @Test("a /join password never goes to disk; other lines go as typed", arguments: [
        ("/join #lunch secret words", "/join #lunch"),
        ("/JOIN #lunch secret", "/JOIN #lunch"),
        ("  /join   #lunch\tsecret", "/join #lunch"),
        ("/join #lunch", "/join #lunch"),
        ("/join", "/join"),
        ("/msg @bob /join #x pw", "/msg @bob /join #x pw"),
        ("hello /join #x pw", "hello /join #x pw"),
        ("/joined #x pw", "/joined #x pw"),
    ])
    func joinPassword(_ line: String, _ written: String) {
        #expect(InputHistory.forDisk(line) == written)
        var history = InputHistory()
        history.add(line)
        #expect(history.entriesForDisk == [written])
        #expect(!InputHistoryFile.encode(history.entriesForDisk).contains("secret"))
    }

    @Test("redacted lines collapse with the same line typed without a password, newest place kept")
    func redactedDuplicates() {
        var history = InputHistory()
        history.add("/join #a")
        history.add("hello")
        history.add("/join #a pw")
        #expect(history.entriesForDisk == ["hello", "/join #a"])
    }

    @Test("entries round-trip through the format, line breaks and backslashes included; long entries are left out")
    func roundTrip() {
        let entries = ["plain", "back\\slash \\n not a break", "two\nlines", "cr\rhere", "ünïcödé 🇬🇧", "trailing\\"]
        let text = InputHistoryFile.encode(entries)
        #expect(text.hasPrefix(InputHistoryFile.header + "\n"))
        #expect(text.split(separator: "\n").count == entries.count + 1)
        #expect(InputHistoryFile.decode(text) == entries)
        let long = String(repeating: "x", count: InputHistoryFile.maxEntryBytes + 1)
        #expect(InputHistoryFile.decode(InputHistoryFile.encode(["a", long, "b"])) == ["a", "b"])
        // Lenient: no header, CRLF endings, an unknown escape.
        #expect(InputHistoryFile.decode("one\r\ntwo \\q\n") == ["one", "two \\q"])
    }

    @Test("a restored history keeps only the newest limit lines, each once")
    func bounded() {
        let lines = (1...1_500).map { "line \($0)" } + ["line 1499"]
        let history = InputHistory(limit: 1_000, lines: lines)
        #expect(history.entries.count == 1_000)
        #expect(history.entries.first == "line 501")
        #expect(history.entries.last == "line 1499")
        var editor = LineEditor()
        editor.restoreHistory(["first", "second"])
        #expect(editor.handle(.up) == .redraw)
        #expect(editor.text == "second")
    }

    @Test("save replaces the file whole with mode 0600 and leaves no temporary file; load reads it back")
    func saveAndLoad() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending(InputHistoryFile.fileName)
        #expect(try InputHistoryFile.load(from: path) == [])
        try InputHistoryFile.save(["one", "two"], to: path)
        // A file left with a wider mode is narrowed by the next save.
        chmod(path, 0o644)
        try InputHistoryFile.save(["one", "two", "three"], to: path)
        #expect(try InputHistoryFile.load(from: path) == ["one", "two", "three"])
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [InputHistoryFile.fileName])
    }
}
