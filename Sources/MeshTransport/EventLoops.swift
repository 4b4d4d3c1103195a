import NIOCore
import NIOPosix

/// The event loops a session's sockets run on, and how socket errors read to people.
///
/// Kept here so that `MeshTransport` stays the only target that imports `NIOPosix`.
public enum EventLoops {
    /// The process-wide event loop group (SwiftNIO's singleton, one thread per core), which
    /// sessions use unless they are given another. Never shut it down.
    public static var shared: any EventLoopGroup { MultiThreadedEventLoopGroup.singleton }

    /// Creates a private event loop group; its creator shuts it down.
    /// - Parameter threads: the number of loop threads.
    /// - Returns: the group.
    public static func makeGroup(threads: Int = 1) -> any EventLoopGroup {
        MultiThreadedEventLoopGroup(numberOfThreads: threads)
    }

    /// Makes Swift Concurrency run its tasks on ``shared``'s threads, so a task that reads from or
    /// writes to a socket does not hop between the concurrency pool and an event loop thread
    /// (SwiftNIO's `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`).
    ///
    /// For executables only: call it once, first thing in `main`, on the main thread. Libraries
    /// must not call it.
    /// - Returns: whether the executor was installed.
    /// - Parameter loops: the number of loop threads for the shared group (and so for all tasks);
    ///   `nil` keeps SwiftNIO's default of one per core.
    @discardableResult
    public static func installAsConcurrencyExecutor(loops: Int? = nil) -> Bool {
        if let loops { NIOSingletons.groupLoopCountSuggestion = loops }
        return NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    /// Runs blocking work (a database write that waits for fsync) on SwiftNIO's blocking-I/O
    /// thread pool, so that it never stalls an event loop (which may also run Swift concurrency's
    /// tasks, see ``installAsConcurrencyExecutor(loops:)``).
    /// - Parameter body: the blocking work.
    /// - Returns: its result.
    /// - Throws: what `body` throws, or a cancellation error when the pool has stopped.
    public static func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }

    /// A sentence for a connect or socket error, e.g. "connection refused" with the address.
    /// - Parameter error: an error from a bootstrap or a channel.
    /// - Returns: the sentence.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return error.description }
        if let error = error as? ChannelError, case .connectTimeout(let amount) = error {
            return "connection timed out after \(amount.nanoseconds / 1_000_000_000) s"
        }
        if let error = error as? NIOConnectionError {
            let reasons = error.connectionErrors.map { "\($0.target): \($0.error)" }
            return reasons.isEmpty ? "could not resolve \(error.host)" : reasons.joined(separator: "; ")
        }
        return "\(error)"
    }
}
