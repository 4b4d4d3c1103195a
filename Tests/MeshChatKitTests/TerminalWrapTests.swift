@testable import MeshChatKit
import Testing

/// `/help` wrapped at word boundaries for the terminal's width, in the pure tier.
@Suite("terminal wrapping")
struct TerminalWrapTests {
    @Test("every line of /help fits at any width, and no word is cut where it fits whole", arguments: [20, 40, 60, 80, 120, 200])
    func helpFits(width: Int) {
        let help = ChatFront.helpText(nil)
        let lines = TerminalText.wrapped(help, width: width)
        #expect(lines.allSatisfy { TerminalText.displayWidth($0) <= width })
        let words = Set(help.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))
        let shown = lines.flatMap { $0.split(separator: " ").map(String.init) }
        // Each shown piece is a whole word unless that word is wider than the line could hold.
        for piece in shown where !words.contains(piece) {
            #expect(words.contains { $0.count > width / 2 && $0.contains(piece) }, "\(piece) was cut at width \(width)")
        }
        #expect(shown.joined() == help.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(), "nothing lost or added")
    }

    @Test("a command's summary hangs under its own column; a narrow line hangs under its indentation")
    func hanging() {
        let lines = TerminalText.wrapped("  /peers   list connected, reachable and discovered peers", width: 30)
        #expect(lines == ["  /peers   list connected,", "           reachable and", "           discovered peers"])
        #expect(TerminalText.wrapped("  a detail sentence that goes on", width: 12) == ["  a detail", "  sentence", "  that goes", "  on"])
        #expect(TerminalText.wrapped("short", width: 80) == ["short"])
        #expect(TerminalText.wrapped("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(TerminalText.wrapped("x", width: 0) == ["x"])
    }
}
