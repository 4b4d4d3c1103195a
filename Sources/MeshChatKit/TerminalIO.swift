import Foundation
import MeshFiles
import MeshTransport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The interactive terminal: the shell around ``KeyDecoder``, ``TerminalScreen`` and
/// ``TerminalStyle`` that owns the real stdin and stdout when both are terminals.
///
/// ``run(_:)`` puts the terminal in raw mode (no echo, no line buffering, no signals from
/// Ctrl-C/Ctrl-Z, bracketed paste on; output processing is left on), reads key bytes on SwiftNIO's
/// blocking thread pool, feeds them to the decoder and the editor, and hands each entered line
/// to the body as an `AsyncSequence` (the one ``ChatFront/run(lines:)`` reads). ``show(_:)`` prints
/// an output above the input line. Both go through one lock, so output never cuts into a half-drawn
/// input line. A terminal resize (SIGWINCH) redraws the input line for the new width at once, and
/// ``resizes`` tells the chat front, which draws the conversation looked at again for the new size.
///
/// The terminal is put back as it was when the body returns or throws, when the input ends
/// (Ctrl-D on an empty line; the chat may go on with `--keep-running`, and the terminal is then in
/// its normal mode again, where Ctrl-C stops the process), at `exit`, on SIGINT, SIGTERM, SIGHUP
/// and SIGQUIT, and on a crash (see `TerminalSignals`).
///
/// Ctrl-C clears the line; on an empty line it prints how to quit, and a second Ctrl-C right
/// after that sends `/quit`. Ctrl-D on an empty line ends the input, as the end of a file does.
///
/// This type is thread-safe.
public final class TerminalIO: Sendable {
    /// The lines the user enters, in order; the sequence ends when the input ends.
    public typealias Lines = AsyncStream<String>

    /// The bytes that turn bracketed paste on and off.
    static let pasteOn = "\u{1B}[?2004h"
    static let pasteOff = "\u{1B}[?2004l"

    private struct State: Sendable {
        var screen: TerminalScreen
        var decoder = KeyDecoder()
        var style = TerminalStyle()
        var names = CompletionNames()
        /// The buffers' part of the status line (``Conversations/statusLine(_:)``).
        var buffersLine = ""
        /// The running file transfers, the progress part of the status line.
        var transfers = TransferMeter()
        var isRaw = false
        var inputEnded = false
        /// The input history's file, once ``keepHistory(in:)`` was called.
        var historyPath: String?
        /// A failed save was reported (reported once per run).
        var historySaveFailed = false
    }

    /// The colour mode of everything written.
    public let colour: ColourMode
    /// One element per terminal resize (SIGWINCH), after the input line was drawn for the new
    /// width: the chat front draws the conversation looked at again for the new size. Resizes in
    /// quick succession may come as one.
    public let resizes: AsyncStream<Void>
    private let resized: AsyncStream<Void>.Continuation
    private let state: Mutex<State>
    private let saved: termios
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// The terminal on the process's stdin and stdout, or `nil` when either is not a terminal
    /// (a pipe, a file): then the chat reads and writes plain lines.
    /// - Parameters:
    ///   - prompt: the prompt of the input line.
    ///   - environment: for the colour mode (`NO_COLOR`, `TERM`, `COLORTERM`).
    /// - Returns: the terminal, not yet in raw mode.
    public static func standardStreams(prompt: String = "> ",
                                       environment: [String: String] = ProcessInfo.processInfo.environment) -> TerminalIO? {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { return nil }
        var modes = termios()
        guard tcgetattr(STDIN_FILENO, &modes) == 0 else { return nil }
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { return nil }
        for fd in pipeFDs {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return TerminalIO(saved: modes, wake: (pipeFDs[0], pipeFDs[1]), prompt: prompt,
                          colour: ColourMode.detect(isTerminal: true, environment: environment))
    }

    private init(saved: termios, wake: (read: Int32, write: Int32), prompt: String, colour: ColourMode) {
        self.saved = saved
        self.wakeRead = wake.read
        self.wakeWrite = wake.write
        self.colour = colour
        (resizes, resized) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        state = Mutex(State(screen: TerminalScreen(prompt: prompt, width: Self.width(), colour: colour)))
    }

    deinit {
        TerminalSignals.forgetWakeFD()
        close(wakeRead)
        close(wakeWrite)
    }

    // MARK: Output

    /// Prints an output above the input line (styled by ``TerminalStyle``), and learns the peer
    /// names it mentions for Tab completion. ``ChatOutput/target(_:scrollback:)`` changes the
    /// prompt (and with a scrollback clears the screen and shows that conversation's lines),
    /// ``ChatOutput/buffers(_:)`` the status line; ``ChatOutput/bell`` rings the bell.
    /// - Parameter output: what the chat front shows.
    public func show(_ output: ChatOutput) {
        state.withLock { state in
            switch output {
            case .target(let target, let scrollback):
                var bytes = state.screen.setPrompt(ChatFront.prompt(for: target))
                if let scrollback {
                    let rows = max(Self.height() - 2, 1)
                    var lines: [StyledText] = []
                    for entry in scrollback.reversed() where lines.count < rows {
                        lines.insert(contentsOf: state.style.lines(for: Self.fitted(entry.output), now: entry.at), at: 0)
                    }
                    bytes += state.screen.replaceLines(Array(lines.suffix(rows)))
                }
                Self.write(bytes)
                return
            case .buffers(let buffers):
                // The status line only when there is more than the mesh to look at.
                state.buffersLine = buffers.count > 1 ? Conversations.statusLine(buffers) : ""
                Self.write(state.screen.setStatus(Self.status(state)))
                return
            case .file(let event):
                // One progress line updated in place: the status row; the start and the end print a line.
                state.transfers.note(event, at: .now)
                Self.write(state.screen.setStatus(Self.status(state)))
                if case .progress(_, bytes: _) = event { return }
            case .bell:
                Self.write("\u{07}")
                return
            default:
                break
            }
            if state.names.learn(from: output) { state.screen.editor.names = state.names.words }
            let lines = state.style.lines(for: Self.fitted(output), now: Date())
            Self.write(state.screen.print(lines))
        }
    }

    /// An output fitted to the terminal's width now: `/help` wrapped at word boundaries.
    private static func fitted(_ output: ChatOutput) -> ChatOutput {
        guard case .help(let text) = output else { return output }
        return .help(TerminalText.wrapped(text, width: width() - 1).joined(separator: "\n"))
    }

    /// The status row: the running transfers' progress, then the buffers.
    private static func status(_ state: State) -> String {
        [state.transfers.line, state.buffersLine].filter { !$0.isEmpty }.joined(separator: " │ ")
    }

    /// Runs `write`, which puts text on this terminal through another stream (log lines on
    /// stderr), with the input line erased before and drawn again after, under the lock that
    /// orders every output: a log line never cuts into the line being typed.
    /// - Parameter write: writes the text (and its newline).
    public func writeAboveInput(_ write: () -> Void) {
        state.withLock { state in
            let (before, after) = state.screen.aroundForeignOutput()
            Self.write(before)
            write()
            Self.write(after)
        }
    }

    // MARK: History

    /// Loads the input history from ``InputHistoryFile/fileName`` in the data directory, and
    /// saves it there after every entered line from now on (each `/join` without its password).
    /// - Parameter directory: the data directory.
    /// - Returns: a sentence when the file exists but cannot be read (the history starts empty
    ///   and is saved anew), else `nil`.
    public func keepHistory(in directory: String) -> String? {
        let path = directory + "/" + InputHistoryFile.fileName
        var problem: String?
        var lines: [String] = []
        do {
            lines = try InputHistoryFile.load(from: path)
        } catch {
            problem = "the input history was not loaded: \(error)"
        }
        state.withLock { state in
            state.screen.editor.restoreHistory(lines)
            state.historyPath = path
        }
        return problem
    }

    /// Writes the history after an entered line (on the blocking pool: it syncs the disk).
    private func saveHistory(_ entries: [String]) async {
        guard let path = state.withLock({ $0.historyPath }) else { return }
        do {
            try await EventLoops.runBlocking { try InputHistoryFile.save(entries, to: path) }
        } catch {
            let first = state.withLock { state in
                defer { state.historySaveFailed = true }
                return !state.historySaveFailed
            }
            if first { show(.error("the input history was not saved: \(error)")) }
        }
    }

    // MARK: Running

    /// Runs `body` with the terminal in raw mode and the user's lines, and puts the terminal back
    /// when `body` returns or throws.
    /// - Parameter body: reads the lines (``ChatFront/run(lines:)``).
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func run<Result: Sendable>(_ body: (Lines) async throws -> Result) async throws -> Result {
        let (lines, continuation) = Lines.makeStream(bufferingPolicy: .unbounded)
        enterRawMode()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.readKeys(into: continuation) }
            do {
                let result = try await body(lines)
                stopReading()
                try await group.waitForAll()
                leaveRawMode()
                return result
            } catch {
                stopReading()
                try? await group.waitForAll()
                leaveRawMode()
                throw error
            }
        }
    }

    private func enterRawMode() {
        state.withLock { state in
            guard !state.isRaw, !state.inputEnded else { return }
            TerminalSignals.install(saved: saved, wakeFD: wakeWrite)
            var raw = saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
            raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | IGNCR | BRKINT | ISTRIP)
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return }
            TerminalSignals.isActive = true
            state.isRaw = true
            _ = state.screen.resize(width: Self.width())
            Self.write(Self.pasteOn + state.screen.start())
        }
    }

    private func leaveRawMode() {
        state.withLock { state in Self.write(leaveRawMode(&state)) }
    }

    /// Back to the saved modes; returns the bytes that erase the input line and end bracketed paste.
    private func leaveRawMode(_ state: inout State) -> String {
        guard state.isRaw else { return "" }
        state.isRaw = false
        TerminalSignals.isActive = false
        var modes = saved
        _ = tcsetattr(STDIN_FILENO, TCSANOW, &modes)
        return state.screen.stop() + Self.pasteOff
    }

    private func stopReading() {
        var byte: UInt8 = 0x53  // "S"
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    // MARK: Input

    private func readKeys(into lines: Lines.Continuation) async {
        defer {
            lines.finish()
            resized.finish()
        }
        let reader = KeyReader(input: STDIN_FILENO, wake: wakeRead)
        while true {
            guard let event = try? await EventLoops.runBlocking({ reader.next() }) else { return }
            switch event {
            case .bytes(let bytes):
                let (goesOn, history) = received(bytes, lines)
                if let history { await saveHistory(history) }
                guard goesOn else { return }
            case .resized:
                state.withLock { state in Self.write(state.screen.resize(width: Self.width())) }
                resized.yield()
            case .ended:
                state.withLock { state in
                    state.inputEnded = true
                    Self.write(leaveRawMode(&state))
                }
                return
            case .stopped:
                return
            }
        }
    }

    /// Applies typed bytes; returns false once the input has ended, and the history to save
    /// when a line was entered.
    private func received(_ bytes: [UInt8], _ lines: Lines.Continuation) -> (goesOn: Bool, history: [String]?) {
        state.withLock { state in
            guard !state.inputEnded else { return (false, nil) }
            var out = ""
            var entered = false
            for key in state.decoder.decode(bytes) {
                // Alt-1…9 looks at that conversation, as `/window N` does (not kept in the history).
                if case .alt(let digit) = key, let number = digit.wholeNumberValue, (1...9).contains(number), digit.isASCII {
                    lines.yield("/window \(number)")
                    continue
                }
                let (action, drawn) = state.screen.press(key)
                out += drawn
                switch action {
                case .submit(let line):
                    lines.yield(line)
                    entered = true
                case .submitLines(let pasted):
                    for line in pasted { lines.yield(line) }
                    entered = true
                case .confirmPaste(let count):
                    out += state.screen.print([state.style.notice("you pasted \(count) lines: y sends them, one line each; any other key drops them", now: Date())])
                case .pasteDropped:
                    out += state.screen.print([state.style.notice("the pasted lines were dropped; nothing was sent", now: Date())])
                case .confirmQuit:
                    out += state.screen.print([state.style.notice("press Ctrl-C again to quit (or Ctrl-D, or type /quit)", now: Date())])
                case .quit:
                    lines.yield("/quit")
                    state.inputEnded = true
                case .endOfInput:
                    state.inputEnded = true
                case .none, .redraw, .clearScreen:
                    break
                }
                if state.inputEnded { break }
            }
            if state.inputEnded { out += leaveRawMode(&state) }
            Self.write(out)
            let history = entered && state.historyPath != nil ? state.screen.editor.history.entriesForDisk : nil
            return (!state.inputEnded, history)
        }
    }

    // MARK: The terminal

    /// The terminal's height in rows (24 when it cannot be asked).
    private static func height() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return 24 }
        return Int(size.ws_row)
    }

    /// The terminal's width in cells (80 when it cannot be asked).
    private static func width() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Writes all of `text` to stdout; a terminal that went away is not written to again (the
    /// key reader sees its end).
    private static func write(_ text: String) {
        StandardStreams.write(text, to: STDOUT_FILENO)
    }
}

/// Blocking reads of the terminal, woken by a pipe for resizes (SIGWINCH) and for stopping.
private struct KeyReader: Sendable {
    enum Event: Sendable {
        case bytes([UInt8])
        case resized
        case ended
        case stopped
    }

    let input: Int32
    let wake: Int32

    /// Waits for input, a resize or a stop. Blocks: call on the blocking thread pool.
    func next() -> Event {
        var fds = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while true {
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                return .ended
            }
            if fds[1].revents != 0 {
                var signals = [UInt8](repeating: 0, count: 64)
                let count = read(wake, &signals, signals.count)
                if count > 0 {
                    return signals[..<count].contains(0x53) ? .stopped : .resized
                }
            }
            if fds[0].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = read(input, &buffer, buffer.count)
                if count > 0 { return .bytes(Array(buffer[..<count])) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                return .ended
            }
        }
    }
}
