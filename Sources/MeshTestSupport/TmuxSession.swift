import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program running in a detached tmux session of a fixed size, driven as a person would: keys
/// typed with `send-keys`, the screen read with `capture-pane`.
///
/// Each session has a tmux server of its own (a socket in a temporary directory, no
/// configuration file read), so tests never touch the user's tmux; the server is killed when the
/// value is released. The pane stays after the program exits (`remain-on-exit`), so a test can
/// read its last screen and exit status.
///
/// Waiting never sleeps to synchronise: ``waitForScreen(timeout:_:)`` polls `capture-pane`
/// against a deadline and returns as soon as the screen shows what is awaited.
///
/// This type is thread-safe (every method runs a tmux command to completion).
public final class TmuxSession: Sendable {
    /// A tmux that is missing, a tmux command that failed, or a wait that timed out.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened (with the screen, for timeouts).
        public let description: String

        /// Creates a failure.
        /// - Parameter description: what happened.
        public init(description: String) {
            self.description = description
        }
    }

    /// The tmux executable.
    public let tmux: String
    /// The server's socket.
    public let socket: String
    /// The session's name (also its target).
    public let name = "test"
    /// The server's process id, to stop it if `kill-server` cannot reach it.
    private let serverPID: pid_t
    /// Kept alive as long as the session: it holds the socket.
    private let directory: TemporaryDirectory

    /// Finds tmux on `PATH` (or in /usr/bin, /usr/local/bin).
    /// - Returns: its absolute path.
    /// - Throws: ``Failure`` saying how to install it.
    public static func locate() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin", "/bin"] {
            let candidate = directory + "/tmux"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Failure(description: "tmux is not installed, and the terminal tests drive meshchat through it: "
                      + "run scripts/setup (it installs tmux with apt), or apt-get install tmux")
    }

    /// Starts `command` in a new detached session.
    /// - Parameters:
    ///   - command: the program and its arguments (the first an absolute path).
    ///   - width: the terminal's width in cells.
    ///   - height: the terminal's height in rows.
    ///   - environment: variables to set for the program (`XDG_CONFIG_HOME` is
    ///     ``ChatProcess/emptyConfigHome`` unless given here).
    ///   - unset: variables to remove from the program's environment (e.g. `NO_COLOR`).
    ///   - directory: where the socket and the configuration go.
    ///   - shellSuffix: shell text run after the program in the same pane (e.g. `; stty -a > FILE`).
    /// - Throws: ``Failure`` when tmux is missing or cannot start the session.
    public init(_ command: [String], width: Int = 100, height: Int = 30, environment: [String: String] = [:],
                unset: [String] = [], directory: TemporaryDirectory, shellSuffix: String = "") throws {
        tmux = try Self.locate()
        self.directory = directory
        socket = directory.appending("tmux-\(UInt32.random(in: 0...UInt32.max)).sock")
        let configuration = directory.appending("tmux.conf")
        try "set-option -g remain-on-exit on\nset-option -g history-limit 2000\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        var line = "env"
        for name in unset { line += " -u " + Self.quoted(name) }
        // Never the user's configuration file: an empty configuration home unless the test gives one.
        var environment = environment
        if environment["XDG_CONFIG_HOME"] == nil { environment["XDG_CONFIG_HOME"] = ChatProcess.emptyConfigHome }
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) { line += " " + Self.quoted("\(key)=\(value)") }
        line += " " + command.map(Self.quoted).joined(separator: " ") + shellSuffix
        let result = try Command.run([tmux, "-f", configuration, "-S", socket, "new-session", "-d", "-x", String(width), "-y", String(height),
                                      "-s", name, line])
        guard result.status == 0 else {
            throw Failure(description: "tmux new-session failed (\(result.status)): \(result.output)")
        }
        let pid = try Command.run([tmux, "-S", socket, "display-message", "-p", "#{pid}"])
        serverPID = pid_t(pid.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Stops the server, which hangs up on the program in the pane.
    deinit {
        let killed = (try? Command.run([tmux, "-S", socket, "kill-server"]))?.status == 0
        if !killed && serverPID > 0 { kill(serverPID, SIGKILL) }
        unlink(socket)
    }

    /// Runs a tmux command against this server.
    /// - Parameter arguments: the command and its arguments.
    /// - Returns: its output.
    /// - Throws: ``Failure`` when it fails.
    @discardableResult
    public func run(_ arguments: [String]) throws -> String {
        let result = try Command.run([tmux, "-S", socket] + arguments)
        guard result.status == 0 else {
            throw Failure(description: "tmux \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.output)")
        }
        return result.output
    }

    /// Types text literally (`send-keys -l`), each character as a key.
    /// - Parameter text: the text.
    public func type(_ text: String) throws {
        try run(["send-keys", "-t", name, "-l", text])
    }

    /// Presses keys by tmux's names: `Enter`, `Up`, `C-a`, `C-w`, `BSpace`, `Tab`…
    /// - Parameter keys: the keys, in order.
    public func press(_ keys: String...) throws {
        try run(["send-keys", "-t", name] + keys)
    }

    /// The screen's rows, top first (trailing blank rows included).
    /// - Parameter escapes: with the colour and attribute escape sequences (`capture-pane -e`).
    /// - Returns: the rows.
    public func screen(escapes: Bool = false) throws -> [String] {
        let output = try run(["capture-pane", "-p", "-t", name] + (escapes ? ["-e"] : []))
        var rows = output.components(separatedBy: "\n")
        if rows.last == "" { rows.removeLast() }
        return rows
    }

    /// A value from tmux's formats, e.g. `#{cursor_x}`, `#{pane_dead}`.
    /// - Parameter format: the format.
    /// - Returns: its value.
    public func value(_ format: String) throws -> String {
        try run(["display-message", "-p", "-t", name, format]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The cursor's column and row (from 0).
    public func cursor() throws -> (x: Int, y: Int) {
        let parts = try value("#{cursor_x},#{cursor_y}").split(separator: ",").compactMap { Int($0) }
        guard parts.count == 2 else { throw Failure(description: "tmux gave no cursor position") }
        return (parts[0], parts[1])
    }

    /// Waits until the screen satisfies `predicate`, polling `capture-pane` every 20 ms.
    /// - Parameters:
    ///   - timeout: the deadline.
    ///   - escapes: capture with escape sequences.
    ///   - predicate: what to wait for, given the rows.
    /// - Returns: the rows that satisfied it.
    /// - Throws: ``Failure`` with the last screen when the deadline passes.
    @discardableResult
    public func waitForScreen(timeout: Duration = .seconds(20), escapes: Bool = false,
                              _ predicate: ([String]) -> Bool) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let rows = try screen(escapes: escapes)
            if predicate(rows) { return rows }
            guard ContinuousClock.now < deadline else {
                throw Failure(description: "the screen did not show what was awaited within \(timeout); it shows:\n"
                              + rows.map { "  |" + $0 }.joined(separator: "\n"))
            }
            try await Task.sleep(for: .milliseconds(20))  // bounded polling: tmux has no screen-change event to await
        }
    }

    /// The rows up to the last that is not blank.
    public static func trimmed(_ rows: [String]) -> [String] {
        var rows = rows
        while let last = rows.last, last.trimmingCharacters(in: .whitespaces).isEmpty { rows.removeLast() }
        return rows
    }

    /// `text` in single quotes for `sh`.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
