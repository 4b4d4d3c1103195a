import NIOCore
import NIOPosix

/// The event loops a session's sockets run on, and how socket errors read to people.
///
/// Kept here so that `MeshTransport` stays the only target that imports `NIOPosix`.
public enum EventLoops {
    /// Creates the event loop group for one session.
    ///
    /// One thread: a chat node's links are few, and one loop thread avoids cross-thread wake-ups
    /// between links and the application's tasks (see the benchmark notes in README.md).
    /// - Parameter threads: the number of loop threads.
    /// - Returns: a group; shut it down when the session ends.
    public static func makeGroup(threads: Int = 1) -> any EventLoopGroup {
        MultiThreadedEventLoopGroup(numberOfThreads: threads)
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
