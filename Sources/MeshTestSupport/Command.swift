import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to completion with posix_spawn and waitpid, output captured through a file.
///
/// Not Foundation's `Process` for commands that start daemons: corelibs-foundation notices a
/// child's exit when an internal socket closes, and a daemon that inherits it keeps it open,
/// so `waitUntilExit()` never returns (seen with scripts/netns-hosts up).
///
/// The command starts with no signal blocked and SIGPIPE at its default, as from a shell: the
/// test runner's threads block most signals, and a daemon that inherited that mask (a tmux
/// server) never saw SIGCHLD, so it neither reaped its children nor exited on `kill-server`.
public enum Command {
    /// What a command did.
    public struct Result: Sendable {
        /// The exit status (128 + signal number when killed by a signal).
        public let status: Int32
        /// Standard output and standard error, interleaved.
        public let output: String
    }

    /// Runs `arguments` (the first is an absolute path) and waits for it.
    /// - Parameters:
    ///   - arguments: the command.
    ///   - environment: extra environment variables.
    /// - Returns: its status and output.
    /// - Throws: when it cannot be started.
    public static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let log = FileManager.default.temporaryDirectory
            .appendingPathComponent("command-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log").path
        defer { unlink(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            throw Failure(description: "could not start \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return Result(status: exit, output: output)
    }

    /// A command that could not be started.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened.
        public let description: String
    }
}
