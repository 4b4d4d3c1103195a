import ArgumentParser
import Foundation
import MeshChatKit
import MeshSession

/// The root of `meshchat rotate-key …`: `main.swift` hands it the command line when the first
/// argument is `rotate-key`, so the chat's own options never take this command's.
struct RotateKeyTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meshchat",
        abstract: "Peer-to-peer encrypted chat between Linux machines; `rotate-key` replaces this node's identity key.",
        subcommands: [RotateKeyCommand.self])

    /// Whether a command line (arguments after the program name) is for this tool.
    /// - Parameter arguments: `CommandLine.arguments.dropFirst()`.
    /// - Returns: Whether the first argument is `rotate-key`.
    static func handles(_ arguments: some Collection<String>) -> Bool {
        arguments.first == "rotate-key"
    }
}

/// `meshchat rotate-key`: replaces the node's identity key with a statement signed by the old and
/// the new key (PROTOCOL.md §20.2), offline, while no chat runs from the data directory.
struct RotateKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-key",
        abstract: "Replace this node's identity key; peers carry your name, verification and history over.",
        discussion: """
            Makes new keys, signs a statement with the old and the new key and keeps it in the data directory, \
            then deletes the old private key. The next time meshchat runs from the directory it carries the \
            statement in its adverts and handshakes: peers that check it move your name, their verification \
            (/trust) and your history with them to the new key, and say so. Your node id changes (it is derived \
            from the key). Run it while no meshchat runs from the directory. Peers that never see the statement \
            (away for longer than your next three rotations) meet the new key as a new peer.
            Exit status: 0 replaced; 1 the key file cannot be read or written, or a meshchat runs from the directory.
            """)

    @Option(name: .long, help: ArgumentHelp(
        "Read the data directory from FILE's data_dir instead of $XDG_CONFIG_HOME/meshchat/config.toml (else ~/.config/meshchat/config.toml).",
        valueName: "FILE"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp(
        "The data directory whose key to replace (default: the configuration file's data_dir, else $XDG_DATA_HOME/meshchat or ~/.local/share/meshchat).",
        valueName: "DIR"))
    var dataDir: String?

    func run() throws {
        let directory: String
        do {
            var arguments: [String] = []
            if let config { arguments += ["--config", config] }
            if let dataDir { arguments += ["--data-dir", dataDir] }
            directory = try NodeOptions.parse(arguments).resolve().dataDirectory
        } catch let error as ConfigFileError {
            StandardStreams.write("meshchat: \(error)\n", to: STDERR_FILENO)
            throw ExitCode(ExitStatus.badConfiguration)
        }
        do {
            // Held while the files change: no chat or send starts from the directory meanwhile.
            let lock = try DataDirectoryLock(directory: directory)
            let milliseconds = Date().timeIntervalSince1970 * 1000
            let now = milliseconds.isFinite ? UInt64(exactly: max(0, milliseconds.rounded(.down))) ?? 0 : 0
            let statement = try LocalPeer.rotateIdentity(in: directory, nowMilliseconds: now)
            withExtendedLifetime(lock) {}
            let old = Session.nodeID(identityKey: statement.oldKey)?.hex ?? "?"
            let new = Session.nodeID(identityKey: statement.newKey)?.hex ?? "?"
            print("replaced the identity key in \(directory): node \(new) succeeds \(old) (a statement signed by both keys is kept there and shown to peers)")
        } catch {
            StandardStreams.write("meshchat: \(error)\n", to: STDERR_FILENO)
            throw ExitCode(ExitStatus.cannotStart)
        }
    }
}
