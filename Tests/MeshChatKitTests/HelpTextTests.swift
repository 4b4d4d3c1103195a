import Foundation
import MeshChatKit
import Testing

/// The text of `/help` and `/help COMMAND`.
@Suite("help text")
struct HelpTextTests {
    @Test("/help lists every command with its usage and summary, and how to send a leading /")
    func list() {
        let text = ChatFront.helpText(nil)
        #expect(ChatCommand.usages.count >= 4)
        for entry in ChatCommand.usages {
            #expect(text.contains(entry.usage), "missing \(entry.usage)")
            #expect(text.contains(entry.summary), "missing \(entry.summary)")
        }
        #expect(text.contains("//"))
        // Commands are listed in the order of `usages`, one per line.
        let positions = ChatCommand.usages.compactMap { text.range(of: $0.usage)?.lowerBound }
        #expect(positions == positions.sorted())
        #expect(text.split(separator: "\n").count == ChatCommand.usages.count + 1)
    }

    @Test("/help COMMAND gives that command's usage and summary", arguments: ChatCommand.usages.map(\.name))
    func oneCommand(name: String) throws {
        let entry = try #require(ChatCommand.usages.first { $0.name == name })
        let text = ChatFront.helpText(name)
        #expect(text.hasPrefix(entry.usage))
        #expect(text.contains(entry.summary))
        #expect(!text.contains("Commands:"))
    }

    @Test("/help connect, as parsed from what the user types, gives /connect HOST:PORT", arguments: ["/help connect", "/help /Connect"])
    func parsedTopic(line: String) throws {
        guard case .help(let topic) = try ChatCommand.parse(line) else {
            Issue.record("\(line) is not a help command")
            return
        }
        #expect(ChatFront.helpText(topic).hasPrefix("/connect HOST:PORT"))
    }

    @Test("an unknown topic says there is no such command")
    func unknown() {
        let text = ChatFront.helpText("frobnicate")
        #expect(text.contains("no command /frobnicate"))
        #expect(!text.contains("/connect HOST:PORT"))
    }
}

/// Every command the parser accepts has help, derived from the parser itself: the command words
/// of `ChatCommand.parse`'s switch are read from its source, so a command added there without an
/// entry in `usages` (and in `details`) fails here.
@Suite("help covers every command")
struct HelpCoverageTests {
    /// The words of `case "…", "…":` labels in `ChatCommand.parse`'s switch.
    static func parsedCommandWords() throws -> [String] {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/MeshChatKit/ChatCommand.swift")
        let text = try String(contentsOf: source, encoding: .utf8)
        let start = try #require(text.range(of: "switch name {"))
        let end = try #require(text.range(of: "default:\n            throw .unknownCommand(name)", range: start.upperBound..<text.endIndex))
        let body = text[start.upperBound..<end.lowerBound]
        var words: [String] = []
        for line in body.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("case \""), trimmed.hasSuffix(":") else { continue }
            for piece in trimmed.dropFirst(5).dropLast().split(separator: ",") {
                words.append(piece.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            }
        }
        return words
    }

    @Test("every command word the parser accepts is a command with a usage, or an alias of one")
    func parserWordsHaveHelp() throws {
        let words = try Self.parsedCommandWords()
        #expect(words.count >= ChatCommand.usages.count)
        let names = Set(ChatCommand.usages.map(\.name))
        for word in words {
            let name = ChatCommand.aliases[word] ?? word
            #expect(names.contains(name), "/\(word) is parsed but has no entry in ChatCommand.usages")
            // What the user types reaches the same help.
            #expect(ChatFront.helpText(word).hasPrefix("/\(name)") || ChatFront.helpText(word).contains("/\(name)"), "/help \(word)")
        }
        for name in names {
            #expect(words.contains(name), "/\(name) has help but the parser does not accept it")
        }
    }

    @Test("/help lists every command on one line with its usage", arguments: ChatCommand.usages.map(\.name))
    func listed(name: String) throws {
        let entry = try #require(ChatCommand.usages.first { $0.name == name })
        let line = try #require(ChatFront.helpText(nil).split(separator: "\n").first { $0.contains(entry.usage) })
        #expect(line.trimmingCharacters(in: .whitespaces).hasPrefix(entry.usage))
        #expect(line.hasSuffix(entry.summary))
        #expect(entry.usage.hasPrefix("/\(name)"))
    }

    @Test("/help COMMAND gives usage, summary and a detail for every command, and names its aliases", arguments: ChatCommand.usages.map(\.name))
    func detailed(name: String) throws {
        let detail = try #require(ChatCommand.details[name], "/\(name) has no entry in ChatCommand.details")
        #expect(!detail.isEmpty)
        let text = ChatFront.helpText(name)
        #expect(text.contains(detail))
        #expect(text.split(separator: "\n").count >= 3)
        for alias in ChatCommand.aliases(of: name) {
            #expect(text.contains("/" + alias))
            #expect(ChatFront.helpText(alias) == text)
        }
    }

    @Test("details name only commands that exist")
    func noStrayDetails() {
        let names = Set(ChatCommand.usages.map(\.name))
        #expect(Set(ChatCommand.details.keys).subtracting(names).isEmpty)
    }
}
