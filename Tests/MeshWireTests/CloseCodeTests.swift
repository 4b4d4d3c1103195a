import Foundation
import MeshTestSupport
import MeshWire
import Testing

/// Close codes (PROTOCOL.md §9).
@Suite("CloseCode")
struct CloseCodeTests {
    /// The rows of the §9 table in PROTOCOL.md: `| code | \`name\` | meaning |`.
    static func protocolTable() throws -> [(code: Int, name: String)] {
        let url = try VectorFiles.packageRoot().appendingPathComponent("Protocol/PROTOCOL.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let start = try #require(text.range(of: "## §9 Close codes"))
        let section = text[start.upperBound...]
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        var rows: [(Int, String)] = []
        for line in section[..<end].split(separator: "\n") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, let code = Int(cells[0]), cells[1].hasPrefix("`") else { continue }
            rows.append((code, cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))))
        }
        return rows
    }

    @Test("every case's description is its name in PROTOCOL.md §9, and the table has every case")
    func namesMatchSpec() throws {
        let table = try Self.protocolTable()
        #expect(table.count == 18)
        #expect(table.count == CloseCode.allCases.count)
        for (code, name) in table {
            let closeCode = try #require(CloseCode(rawValue: UInt8(code)), "§9 code \(code) has no case")
            #expect(closeCode.description == name)
            #expect(CloseCode(wireValue: UInt32(code)) == closeCode)
        }
    }

    @Test("unknown wire values read as protocolViolation", arguments: [UInt32(18), 19, 255, 256, 1_000, .max])
    func unknownWireValues(value: UInt32) {
        #expect(CloseCode(wireValue: value) == .protocolViolation)
    }

    @Test("known wire values read as themselves", arguments: CloseCode.allCases)
    func knownWireValues(code: CloseCode) {
        #expect(CloseCode(wireValue: UInt32(code.rawValue)) == code)
        // 256 + code must not wrap around to a known code.
        #expect(CloseCode(wireValue: 256 + UInt32(code.rawValue)) == .protocolViolation)
    }
}
