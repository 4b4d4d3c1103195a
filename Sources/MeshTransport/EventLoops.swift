import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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

    /// A sentence for a connect or socket error, for people: "connection refused", "no route to
    /// the host", "connection timed out after 10 s"; with each address when several were tried and
    /// they failed differently ("127.0.0.2:4000: connection refused; [::1]:4000: …").
    /// - Parameter error: an error from a bootstrap or a channel.
    /// - Returns: the sentence.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return sentence(errno: error.errnoCode) ?? error.description }
        if let error = error as? ChannelError, case .connectTimeout(let amount) = error {
            return "connection timed out after \(amount.nanoseconds / 1_000_000_000) s"
        }
        if let error = error as? NIOConnectionError {
            let reasons = error.connectionErrors.map { (address: format($0.target), reason: describe($0.error)) }
            guard let first = reasons.first else { return "could not resolve \(error.host)" }
            // One address, or the same reason for each: the caller names the address it dialled.
            if reasons.allSatisfy({ $0.reason == first.reason }) { return first.reason }
            return reasons.map { "\($0.address): \($0.reason)" }.joined(separator: "; ")
        }
        return "\(error)"
    }

    /// The usual connect and socket failures in words; `nil` for others (the system's text then).
    static func sentence(errno: CInt) -> String? {
        switch errno {
        case ECONNREFUSED: "connection refused"
        case ETIMEDOUT: "connection timed out"
        case EHOSTUNREACH: "no route to the host"
        case ENETUNREACH: "the network is unreachable"
        case ECONNRESET: "the connection was reset by the peer"
        case ECONNABORTED: "the connection was aborted"
        case EPIPE: "the peer closed the connection"
        case EADDRNOTAVAIL: "the address is not available on this machine"
        case EADDRINUSE: "the address is already in use"
        case EACCES, EPERM: "not permitted"
        case ENOENT: "no such file or directory"
        default: nil
        }
    }

    /// An address as people write it: `127.0.0.1:4000`, `[::1]:4000`, or a socket's path.
    static func format(_ address: SocketAddress) -> String {
        switch address {
        case .v4: "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        case .v6: "[\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        case .unixDomainSocket: address.pathname ?? "a local socket"
        }
    }
}
