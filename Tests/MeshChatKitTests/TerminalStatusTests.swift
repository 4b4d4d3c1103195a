@testable import MeshChatKit
import Testing

/// The status line of the conversations above the input line, and switching buffers, on the
/// tiny terminal emulator.
@Suite("terminal status line")
struct TerminalStatusTests {
    typealias Rig = TerminalScreenTests.Rig

    @Test("the status line sits above the input line; printed lines go above both, and the half-typed line is intact")
    func statusAboveInput() {
        var rig = Rig()
        rig.start()
        rig.type(.text("half"))
        rig.terminal.feed(rig.screen.setStatus("[1:mesh] 2:#dev(1)"))
        #expect(rig.terminal.visibleLines == ["[1:mesh] 2:#dev(1)", "> half"])
        rig.print("10:50 <bob> hello")
        rig.print("10:51 <bob> again")
        #expect(rig.terminal.visibleLines == ["10:50 <bob> hello", "10:51 <bob> again", "[1:mesh] 2:#dev(1)", "> half"])
        rig.terminal.feed(rig.screen.setStatus("[1:mesh] 2:#dev(2)"))
        #expect(rig.terminal.visibleLines == ["10:50 <bob> hello", "10:51 <bob> again", "[1:mesh] 2:#dev(2)", "> half"])
        #expect(rig.terminal.column == 2 + 4)
        rig.terminal.feed(rig.screen.setStatus(""))
        #expect(rig.terminal.visibleLines == ["10:50 <bob> hello", "10:51 <bob> again", "> half"])
        #expect(rig.terminal.unknown.isEmpty)
    }

    @Test("a long status line is cut to the width, never wrapped; a resize draws it for the new width")
    func statusCut() {
        var rig = Rig()
        rig.start()
        let long = (1...12).map { "\($0):@peer\($0)" }.joined(separator: " ")
        rig.terminal.feed(rig.screen.setStatus(long))
        #expect(rig.terminal.visibleLines.count == 2)
        #expect(rig.terminal.visibleLines[0].count <= 39)
        #expect(rig.terminal.visibleLines[0].hasSuffix("…"))
        rig.terminal.feed(rig.screen.resize(width: 30))
        #expect(rig.terminal.visibleLines.first.map { $0.count <= 29 } == true)
        #expect(rig.terminal.visibleLines.last == ">")
    }

    @Test("switching buffers clears the screen and shows that buffer's lines, then the status and input lines")
    func replaceLines() {
        var rig = Rig()
        rig.start()
        rig.print("10:50 <bob> mesh line")
        rig.terminal.feed(rig.screen.setStatus("1:mesh [2:#dev]"))
        rig.terminal.feed(rig.screen.setPrompt("[#dev] > "))
        rig.terminal.feed(rig.screen.replaceLines(["10:40 <#dev bob> dev line"]))
        #expect(rig.terminal.visibleLines == ["10:40 <#dev bob> dev line", "1:mesh [2:#dev]", "[#dev] >"])
        #expect(rig.terminal.unknown.isEmpty)
    }
}
