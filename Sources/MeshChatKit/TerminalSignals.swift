import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Puts the terminal back when the process ends in a way ``TerminalIO`` does not see: `exit`,
/// SIGINT/SIGTERM/SIGHUP/SIGQUIT from outside, or a crash (SIGSEGV, SIGBUS, SIGILL, SIGTRAP,
/// SIGABRT, SIGFPE). Also turns SIGWINCH into a byte on a wake-up pipe.
///
/// Signal handlers may only call async-signal-safe functions, so everything they use is
/// prepared before they are installed: the saved terminal modes in a fixed buffer, the bytes to
/// write, the pipe's file descriptor, the previous handlers of the crash signals. The handlers
/// call only `tcsetattr`, `write`, `sigaction` and `raise`.
///
/// After restoring the terminal, a terminating signal is raised again with its previous handler
/// (by default: the process ends with that signal, as it would have without meshchat's terminal
/// mode; for a crash, Swift's backtracer still prints its report).
///
/// - Important: process-wide; ``TerminalIO`` installs it once and sets ``isActive`` while the
///   terminal is in raw mode.
enum TerminalSignals {
    /// The signals that end the process, whose handlers restore the terminal first.
    static let fatalSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]

    /// Bytes written on the way out: bracketed paste off, then a new line.
    static let leaveBytes: [UInt8] = Array("\u{1B}[?2004l\r\n".utf8)

    private struct State {
        var saved = termios()
        var active: Int32 = 0
        var wakeFD: Int32 = -1
        var previous: [sigaction] = Array(repeating: sigaction(), count: 65)
        var leave = [UInt8](repeating: 0, count: 32)
        var leaveCount = 0
        var installed = false
    }

    /// Allocated once and never freed, so that handlers never touch lazily initialised Swift
    /// globals or the allocator.
    nonisolated(unsafe) private static let state: UnsafeMutablePointer<State> = {
        let pointer = UnsafeMutablePointer<State>.allocate(capacity: 1)
        pointer.initialize(to: State())
        return pointer
    }()

    /// Installs the handlers (once) and records the terminal modes to restore.
    /// - Parameters:
    ///   - saved: the terminal's modes before raw mode.
    ///   - wakeFD: the write end of the reader's wake-up pipe (non-blocking), for SIGWINCH.
    /// - Important: call before entering raw mode, from one thread.
    static func install(saved: termios, wakeFD: Int32) {
        let state = Self.state
        state.pointee.saved = saved
        state.pointee.wakeFD = wakeFD
        for (i, byte) in leaveBytes.enumerated() { state.pointee.leave[i] = byte }
        state.pointee.leaveCount = leaveBytes.count
        guard !state.pointee.installed else { return }
        state.pointee.installed = true
        atexit { TerminalSignals.restoreNow() }
        for signal in fatalSignals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                TerminalSignals.restoreNow()
                let state = TerminalSignals.state
                var previous = state.pointee.previous[Int(signal)]
                sigaction(signal, &previous, nil)
                raise(signal)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signal, &action, &state.pointee.previous[Int(signal)])
        }
        var resize = sigaction()
        resize.__sigaction_handler.sa_handler = { _ in
            let fd = TerminalSignals.state.pointee.wakeFD
            guard fd >= 0 else { return }
            let saved = errno
            var byte: UInt8 = 0x57  // "W"
            _ = write(fd, &byte, 1)
            errno = saved
        }
        sigemptyset(&resize.sa_mask)
        resize.sa_flags = SA_RESTART
        sigaction(SIGWINCH, &resize, nil)
    }

    /// Stops writing to the wake-up pipe (before it is closed).
    static func forgetWakeFD() {
        state.pointee.wakeFD = -1
    }

    /// Whether the terminal is in raw mode (the handlers restore it only then).
    static var isActive: Bool {
        get { state.pointee.active != 0 }
        set { state.pointee.active = newValue ? 1 : 0 }
    }

    /// Restores the saved modes and writes ``leaveBytes`` if raw mode is on. Async-signal-safe.
    static func restoreNow() {
        let state = Self.state
        guard state.pointee.active != 0 else { return }
        state.pointee.active = 0
        let saved = errno
        _ = tcsetattr(STDIN_FILENO, TCSANOW, &state.pointee.saved)
        let count = state.pointee.leaveCount
        state.pointee.leave.withUnsafeBufferPointer { buffer in
            _ = write(STDOUT_FILENO, buffer.baseAddress, count)
        }
        errno = saved
    }
}
