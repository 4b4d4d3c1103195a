/// A line that could not be parsed as a command.
public struct ChatCommandError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sentence to show, including the right usage.
    public let message: String

    /// The message.
    public var description: String { message }

    /// `unknown command /whoiz (did you mean /whois?); …`: a command or alias within two edits, as
    /// configuration keys have it (``ConfigFile/closest(to:among:)``).
    static func unknownCommand(_ name: String) -> ChatCommandError {
        let names = ChatCommand.usages.map(\.name) + ChatCommand.aliases.keys.sorted()
        // Past 32 characters no command is two edits away (the bound keeps the distance table
        // small); a name of three letters or fewer may be one edit off, else anything would match.
        let near = name.count <= 32 ? ConfigFile.closest(to: name, among: names, maxEdits: name.count <= 3 ? 1 : 2) : nil
        return ChatCommandError(message: "unknown command /\(name)\(near.map { " (did you mean /\($0)?)" } ?? ""); type /help for the list of commands")
    }

    static func badArgument(command: String, _ why: String) -> ChatCommandError {
        let command = ChatCommand.aliases[command] ?? command
        let usage = ChatCommand.usages.first { $0.name == command }?.usage ?? "/\(command)"
        return ChatCommandError(message: "/\(command): \(why); usage: \(usage)")
    }
}
