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
