import MeshChat

extension ChatCommand {
    /// The longest `/search` text, in characters.
    public static let maxSearchCharacters = 256

    /// Parses the commands of conversations and attention (`/query`, `/window`, `/switch`,
    /// `/search`, `/away`, `/whois`, `/clear`, `/me`).
    static func conversationCommand(_ name: String, _ argument: String) throws(ChatCommandError) -> ChatCommand {
        switch name {
        case "query":
            let target = argument.trimmingPrefix("@")
            guard !target.contains(" ") else { throw .badArgument(command: "query", "one peer is required") }
            return .query(target.isEmpty ? nil : target)
        case "window", "win":
            guard !argument.isEmpty else { return .window(nil) }
            guard argument.count <= 4, argument.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(argument),
                  (1...Conversations.maxBuffers).contains(number) else {
                throw .badArgument(command: "window", "\"\(argument.prefix(40))\" is not a number from 1 to \(Conversations.maxBuffers)")
            }
            return .window(number)
        case "switch":
            guard !argument.isEmpty, !argument.contains(" ") || argument.hasPrefix("#") else {
                throw .badArgument(command: "switch", "one #room, @peer or mesh is required")
            }
            return .switchTo(argument)
        case "search":
            guard !argument.isEmpty else { throw .badArgument(command: "search", "the text to look for is missing") }
            guard argument.count <= maxSearchCharacters else {
                throw .badArgument(command: "search", "the text is \(argument.count) characters, at most \(maxSearchCharacters)")
            }
            return .search(argument)
        case "away":
            guard !argument.isEmpty else { return .away(nil) }
            do {
                _ = try AwayText.attachment(argument)
            } catch {
                throw .badArgument(command: "away", error.description)
            }
            return .away(argument)
        case "me":
            guard !argument.isEmpty else { throw .badArgument(command: "me", "the text is missing") }
            return .me(argument)
        case "clear":
            guard argument.isEmpty else { throw .badArgument(command: "clear", "it takes no argument") }
            return .clear
        case "whois":
            let target = argument.trimmingPrefix("@")
            guard !target.isEmpty, !target.contains(" ") else { throw .badArgument(command: "whois", "one peer is required") }
            return .whois(target)
        default:
            throw .unknownCommand(name)
        }
    }
}
