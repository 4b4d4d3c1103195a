import MeshTransport

extension Session {
    /// Tunes the process's allocator (glibc) for moving bulk data through a session: freed memory
    /// is kept for reuse (up to 8 MiB) and allocations up to 4 MiB come from the heap.
    ///
    /// With glibc's defaults, the 64 KiB buffers that every chunk of a stream or resource needs
    /// are fresh memory whose pages fault in one by one: a stream then spends about a fifth of its
    /// time in page faults. An idle process is not affected; a busy one keeps at most 8 MiB more
    /// than it uses. For executables only, first thing in `main`: a library must not change the
    /// process's allocator. Elsewhere than glibc it does nothing.
    /// - Returns: whether the settings were applied.
    @discardableResult
    public static func keepFreedMemoryForReuse() -> Bool {
        HeapTuning.keepFreedMemoryForReuse()
    }
}

extension Session {
    /// Runs the process's Swift tasks on the event loop threads that sessions use by default
    /// (SwiftNIO's singleton group), so that a task reading from or writing to a session does not
    /// hop between Swift's cooperative pool and an event loop at each step.
    ///
    /// For executables only, first thing in `main`: a library must not change the process's
    /// executor. Tasks then share the loops with the sockets: blocking work belongs in
    /// ``runBlocking(_:)``.
    /// - Returns: whether the executor was installed.
    @discardableResult
    public static func runTasksOnEventLoops() -> Bool {
        EventLoops.installAsConcurrencyExecutor()
    }
}
