import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `meshchat` (or `meshbench`) process under test: write lines to its stdin, await lines of
/// its stdout with a deadline, read its stderr, signal it.
///
/// Waiting never sleeps to synchronise: ``waitForLine(timeout:_:)`` resumes as soon as a matching line
/// arrives and fails with the process's recent output when the deadline passes first.
///
/// This type is thread-safe.
public final class ChatProcess: @unchecked Sendable {
    // @unchecked: all mutable state is behind `lock`.
    private let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = Data()
    private var errorText = Data()
    private var stdoutClosed = false
    private var waiters: [UUID: Waiter] = [:]
    /// A label for failure messages.
    public let label: String

    private struct Waiter {
        var from: Int
        var predicate: @Sendable (String) -> Bool
        var continuation: CheckedContinuation<String, any Error>
    }

    /// A wait that timed out or a process that ended first.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened, with the process's recent output.
        public let description: String
    }

    /// The package root, found from this file's path.
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// The directory holding the built executables: `$MESHCHAT_BIN`'s, else `.build/debug`.
    public static var binDirectory: URL {
        if let bin = ProcessInfo.processInfo.environment["MESHCHAT_BIN"], !bin.isEmpty {
            return URL(fileURLWithPath: bin).deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug")
    }

    /// An empty directory given to every process as `XDG_CONFIG_HOME` (unless the test sets
    /// it), so tests never read the configuration file of the user who runs them.
    public static let emptyConfigHome: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("meshchat-test-config-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// Starts an executable from ``binDirectory``.
    /// - Parameters:
    ///   - arguments: its arguments.
    ///   - executable: `meshchat` (the default) or `meshbench`.
    ///   - label: a name for failure messages.
    ///   - environment: extra environment variables (`XDG_CONFIG_HOME` is ``emptyConfigHome``
    ///     unless given here).
    ///   - launcher: runs the executable through this command instead, e.g.
    ///     `["scripts/netns-hosts", "exec", "A"]` (relative paths are from the package root).
    /// - Throws: when the executable is missing or cannot start.
    public init(_ arguments: [String], executable: String = "meshchat", label: String,
                environment: [String: String] = [:], launcher: [String] = []) throws {
        self.label = label
        var url = Self.binDirectory.appendingPathComponent(executable)
        var arguments = arguments
        if let first = launcher.first {
            arguments = Array(launcher.dropFirst()) + [url.path] + arguments
            url = first.hasPrefix("/") ? URL(fileURLWithPath: first) : Self.packageRoot.appendingPathComponent(first)
        }
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw Failure(description: "\(url.path) is not built; run scripts/test (or swift build) first")
        }
        process.executableURL = url
        process.arguments = arguments
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        var env = ProcessInfo.processInfo.environment
        // Never the user's configuration file: an empty configuration home unless the test gives one.
        env["XDG_CONFIG_HOME"] = Self.emptyConfigHome
        for (key, value) in environment { env[key] = value }
        process.environment = env
        try process.run()
        Self.readUntilEnd(stdoutPipe.fileHandleForReading, label: "\(label) stdout") { [weak self] data in
            self?.receivedStdout(data)
        }
        Self.readUntilEnd(stderrPipe.fileHandleForReading, label: "\(label) stderr") { [weak self] data in
            guard let self else { return }
            self.lock.withLock { self.errorText.append(data) }
        }
    }

    /// Reads `handle` with blocking reads on a thread of its own until end of file, passing each
    /// chunk, then one empty `Data`, to `deliver`.
    ///
    /// Not `readabilityHandler`: on Linux, tearing down its dispatch read source races inside
    /// libdispatch (swift-corelibs-libdispatch#949) and crashed the test runner in
    /// `_dispatch_event_loop_drain`, and its end-of-file call was sometimes never made.
    private static func readUntilEnd(_ handle: FileHandle, label: String, _ deliver: @escaping @Sendable (Data) -> Void) {
        let thread = Thread {
            while true {
                let data = handle.availableData
                deliver(data)
                if data.isEmpty { return }
            }
        }
        thread.name = label
        thread.start()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }

    /// Writes one line to stdin.
    /// - Parameter line: the line, without a newline.
    public func send(_ line: String) {
        stdinPipe.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Writes many lines to stdin at once.
    /// - Parameter many: the lines.
    public func send(lines many: [String]) {
        stdinPipe.fileHandleForWriting.write(Data(many.map { $0 + "\n" }.joined().utf8))
    }

    /// Closes stdin (end of input).
    public func closeInput() {
        try? stdinPipe.fileHandleForWriting.close()
    }

    /// Sends a signal.
    /// - Parameter signal: e.g. `SIGKILL`, `SIGSTOP`.
    public func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Every stdout line so far.
    public var output: [String] { lock.withLock { lines } }

    /// Everything written to stderr so far.
    public var errors: String { lock.withLock { String(decoding: errorText, as: UTF8.self) } }

    /// Waits for a stdout line (one already printed, or a future one) matching `predicate`.
    /// - Parameters:
    ///   - timeout: the deadline.
    ///   - from: the index of the first line to consider (default: all lines so far).
    ///   - predicate: what to wait for.
    /// - Returns: the line.
    /// - Throws: ``Failure`` with recent output when the deadline passes or stdout ends first.
    @discardableResult
    public func waitForLine(timeout: Duration = .seconds(20), from: Int = 0,
                            _ predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        let id = UUID()
        return try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask {
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        self.lock.lock()
                        if let line = self.lines[min(from, self.lines.count)...].first(where: predicate) {
                            self.lock.unlock()
                            continuation.resume(returning: line)
                            return
                        }
                        if self.stdoutClosed {
                            self.lock.unlock()
                            continuation.resume(throwing: self.failure("stdout ended"))
                            return
                        }
                        self.waiters[id] = Waiter(from: self.lines.count, predicate: predicate, continuation: continuation)
                        self.lock.unlock()
                    }
                } onCancel: {
                    let waiter = self.lock.withLock { self.waiters.removeValue(forKey: id) }
                    waiter?.continuation.resume(throwing: CancellationError())
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw self.failure("no matching line within \(timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Waits until standard error contains `fragment` (bounded polling every 20 ms: stderr has
    /// no line waiters).
    /// - Parameters:
    ///   - fragment: the text to find.
    ///   - timeout: the deadline.
    /// - Throws: ``Failure`` on timeout.
    public func waitForStderr(_ fragment: String, timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !errors.contains(fragment) {
            if ContinuousClock.now >= deadline { throw failure("no \"\(fragment)\" on stderr within \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for a JSON event line containing every `"key":value` fragment given.
    /// - Parameters:
    ///   - fragments: literal JSON fragments, e.g. `"\"event\":\"message\""`.
    ///   - timeout: the deadline.
    /// - Returns: the line.
    /// - Throws: ``Failure`` on timeout.
    @discardableResult
    public func waitForEvent(_ fragments: String..., timeout: Duration = .seconds(20)) async throws -> String {
        let fragments = fragments
        return try await waitForLine(timeout: timeout) { line in fragments.allSatisfy { line.contains($0) } }
    }

    /// Waits for the process to exit.
    /// - Parameter timeout: the deadline.
    /// - Returns: the exit status.
    /// - Throws: ``Failure`` when it is still running at the deadline.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(20)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw failure("still running after \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))  // bounded polling for exit: Process has no async wait
        }
        // The exit can be seen before the reader has taken the last bytes of stdout: wait for its
        // end of file too, so `output` is complete when this returns.
        while !lock.withLock({ stdoutClosed }) {
            guard ContinuousClock.now < deadline else { throw failure("stdout still open after \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return process.terminationStatus
    }

    /// Stops the process (SIGKILL) if it still runs.
    public func kill9() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Resident memory of the process in bytes, from /proc.
    public var residentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        return nil
    }

    private func receivedStdout(_ data: Data) {
        var resumed: [(CheckedContinuation<String, any Error>, Result<String, any Error>)] = []
        lock.withLock {
            if data.isEmpty {
                stdoutClosed = true
                for (_, waiter) in waiters { resumed.append((waiter.continuation, .failure(failureLocked("stdout ended")))) }
                waiters.removeAll()
                return
            }
            partial.append(data)
            // Only a chunk with a newline ends a line: a long line (a 16 MiB data event) arriving in
            // many chunks is not scanned again from its start for each.
            guard data.contains(0x0A) else { return }
            while let newline = partial.firstIndex(of: 0x0A) {
                lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
                partial.removeSubrange(partial.startIndex...newline)
            }
            for (id, waiter) in waiters {
                if let line = lines[min(waiter.from, lines.count)...].first(where: waiter.predicate) {
                    waiters[id] = nil
                    resumed.append((waiter.continuation, .success(line)))
                }
            }
        }
        for (continuation, result) in resumed { continuation.resume(with: result) }
    }

    private func failure(_ what: String) -> Failure {
        lock.withLock { failureLocked(what) }
    }

    private func failureLocked(_ what: String) -> Failure {
        let tail = lines.suffix(8).joined(separator: "\n    ")
        let errors = String(decoding: errorText.suffix(2000), as: UTF8.self)
        return Failure(description: "\(label): \(what)\n  last stdout:\n    \(tail)\n  stderr:\n\(errors)")
    }
}

/// A scratch directory removed when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The path.
    public let path: String

    /// Creates a fresh directory under the system's temporary directory.
    /// - Parameter prefix: a name prefix.
    public init(_ prefix: String = "meshchat-test") {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A path inside the directory.
    /// - Parameter name: a relative name.
    /// - Returns: the full path.
    public func appending(_ name: String) -> String { path + "/" + name }
}
