import Foundation
import MeshFiles
import MeshSession

extension ChatFront {
    // MARK: /send (PROTOCOL.md §16)

    /// `/send @name FILE`: checks the file and the peer, then offers the file; progress and the
    /// result arrive as ``ChatOutput/file(_:)`` outputs. The peer may be out of reach (a peer a
    /// private line could go to): the transfer then waits paused for a route (PROTOCOL.md
    /// §16.4.1). Every problem is one error line with the usage, and nothing is sent.
    func sendFile(to target: String, path: String) async {
        let usage = ChatCommand.usages.first { $0.name == "send" }?.usage ?? "/send @NAME FILE"
        func fail(_ why: String) { emit(.error("/send: \(why); usage: \(usage)")) }
        guard let files else { return fail("file transfer is off in this chat") }
        let resolved = Self.resolve(path)
        let peer: PeerID
        switch PeerLookup.match(target, in: await knownPeers(), noun: "peer", names: trust.book) {
        case .failure(let message): return fail(message)
        case .success(let found): peer = found
        }
        do {
            try await files.send(path: resolved, to: peer)
        } catch {
            fail(error.message)
        }
    }

    /// `/files`: the transfers running now.
    func listFiles() async {
        guard let files else { return emit(.error("/files: file transfer is off in this chat")) }
        emit(.files(await files.running))
    }

    /// `/cancel ID`: stops the one running transfer whose id starts with `prefix`; its
    /// ``ChatOutput/file(_:)`` failure (`cancelled`) follows.
    func cancelFile(_ prefix: String) async {
        let usage = ChatCommand.usages.first { $0.name == "cancel" }?.usage ?? "/cancel ID"
        guard let files else { return emit(.error("/cancel: file transfer is off in this chat")) }
        let matches = await files.running.filter { $0.info.id.hex.hasPrefix(prefix) }
        guard matches.count == 1, let match = matches.first else {
            return emit(.error(matches.isEmpty
                ? "/cancel: no file transfer \(prefix) is running (see /files); usage: \(usage)"
                : "/cancel: \(prefix) matches \(matches.count) transfers; give more of the id; usage: \(usage)"))
        }
        await files.cancel(match.info.id)
    }

    /// An absolute path for what the user typed: `~` and `~/…` are the home directory, a relative
    /// path is relative to the working directory (`/send`'s file, and the `--downloads` option).
    /// - Parameters:
    ///   - path: the typed path.
    ///   - home: the home directory (`$HOME`).
    ///   - workingDirectory: the current directory.
    /// - Returns: an absolute, standardised path.
    public static func resolve(_ path: String, home: String = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory(),
                        workingDirectory: String = FileManager.default.currentDirectoryPath) -> String {
        var full = path
        if full == "~" {
            full = home
        } else if full.hasPrefix("~/") {
            full = home + full.dropFirst(1)
        } else if !full.hasPrefix("/") {
            full = workingDirectory + "/" + full
        }
        return (full as NSString).standardizingPath
    }
}
