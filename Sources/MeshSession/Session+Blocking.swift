import MeshTransport

extension Session {
    /// Runs blocking work (a file or database call) on the thread pool the session's transport
    /// uses for blocking work, off its event loops and off Swift's cooperative pool, so that
    /// applications on channels need not reach below the session for it.
    ///
    /// This method is thread-safe.
    /// - Parameter body: the work.
    /// - Returns: what it returns.
    /// - Throws: what it throws, or an error when the pool has shut down.
    public static func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await EventLoops.runBlocking(body)
    }
}
