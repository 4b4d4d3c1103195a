import ArgumentParser

/// Shell completions for the whole program. `meshchat send`, `relay`, `places` and `rotate-key`
/// are parsed by roots of their own (main.swift), so the chat's root does not declare them; while
/// a completion script is generated (`--generate-completion-script bash|zsh|fish`, which
/// `scripts/install` runs) the chat's root declares them as subcommands, so that the script
/// completes them and their options. Nothing else changes: they still run from their own roots.
enum CompletionScripts {
    /// ArgumentParser's option that prints a completion script.
    static let option = "--generate-completion-script"

    /// Whether this command line asks for a completion script.
    /// - Parameter arguments: the arguments after the program's name.
    /// - Returns: `true` when one of them is the option (`--generate-completion-script bash` or `=bash`).
    static func isRequested(_ arguments: some Sequence<String>) -> Bool {
        arguments.contains { $0 == option || $0.hasPrefix(option + "=") }
    }

    /// The chat root's subcommands: the four with roots of their own while a completion script
    /// is generated, none otherwise.
    static var subcommands: [any ParsableCommand.Type] {
        guard isRequested(CommandLine.arguments.dropFirst()) else { return [] }
        return [SendCommand.self, RelayCommand.self, PlacesCommand.self, RotateKeyCommand.self]
    }
}
