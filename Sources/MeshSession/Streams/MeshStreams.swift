import struct Foundation.Data
import NIOConcurrencyHelpers

/// The writing side of a byte stream to one node anywhere in the mesh (PROTOCOL.md §18), in the
/// model of the output stream of Multipeer Connectivity's `startStream(withName:toPeer:)`.
///
/// Bytes arrive at the reader in order, exactly once, across relays and lost packets.
/// ``write(_:)`` waits while ``StreamLimits/window`` bytes are written and not yet acknowledged,
/// so a slow reader bounds this node's memory; ``finish()`` returns once the reader's application
/// has read every byte.
///
/// ```swift
/// let stream = try await session.startStream(withName: "log", to: peer)
/// try await stream.write(Data("hello\n".utf8))
/// try await stream.finish()
/// ```
///
/// This type is thread-safe; write from one task at a time.
public final class MeshOutputStream: Sendable {
    /// The stream's name, as the reader sees it.
    public let name: String
    /// The reader.
    public let peer: PeerID
    let key: StreamKey
    let shell: StreamShell

    init(name: String, peer: PeerID, key: StreamKey, shell: StreamShell) {
        self.name = name
        self.peer = peer
        self.key = key
        self.shell = shell
    }

    /// Writes bytes, waiting while the stream holds its window of unacknowledged bytes.
    ///
    /// Cancelling the task that waits here (or in ``finish()``) cancels the stream.
    /// - Parameter bytes: any number of bytes (cut into chunks of ``StreamLimits/chunkSize``).
    /// - Throws: ``StreamError`` once the stream has ended: the reader cancelled or refused it,
    ///   it timed out, or ``cancel(reason:)`` or ``finish()`` was called.
    public func write(_ bytes: Data) async throws(StreamError) {
        try await shell.write(bytes, to: key)
    }

    /// Ends the stream after the bytes written, and waits until the reader's application has read
    /// every one of them.
    /// - Throws: ``StreamError`` when the stream ended otherwise first.
    public func finish() async throws(StreamError) {
        try await shell.finish(key)
    }

    /// Ends the stream at once; the reader's sequence throws ``StreamError`` `cancelled` with
    /// `reason`. Waiting writes and ``finish()`` throw. Does nothing once the stream is over.
    /// Returns once the close has been handed to the mesh.
    /// - Parameter reason: for people, at most 256 bytes (cut beyond).
    public func cancel(reason: String) async {
        await shell.cancel(key, reason: reason)
    }
}

/// The reading side of a stream another node opened to this one: its name, its opener, and its
/// bytes as an `AsyncSequence` of chunks in order.
///
/// The sequence ends normally after the opener's last byte and throws ``StreamError`` when the
/// stream ends otherwise (the opener cancelled, timed out, or broke the protocol). Taking a chunk
/// is what "read" means: the stream holds at most ``StreamLimits/window`` bytes not yet taken,
/// and the opener's `finish()` returns once every chunk has been taken. One consumer.
///
/// This type is thread-safe.
public final class MeshInputStream: AsyncSequence, Sendable {
    /// A chunk of bytes.
    public typealias Element = Data
    /// Why the stream ended otherwise than by its end.
    public typealias Failure = StreamError

    /// The stream's name, as the opener gave it (0–255 bytes of UTF-8, untrusted).
    public let name: String
    /// The opener.
    public let peer: PeerID
    let key: StreamKey
    let shell: StreamShell
    let buffer = NIOLockedValueBox(ChunkBuffer())

    struct ChunkBuffer {
        var chunks: [Data] = []
        var head = 0
        var ended = false
        var error: StreamError?
        var waiter: CheckedContinuation<Void, Never>?
        /// Bytes the application took and the shell has not been told of.
        var unreported = 0
    }

    /// Bytes taken by the application that make a report to the shell (when the buffer is not
    /// empty; an empty one reports at once).
    static let reportBytes = 256 * 1024
    /// The most bytes one step of the iteration hands over: chunks that wait together are joined
    /// up to this (one copy, which gives them indices from 0), so that a reader behind the
    /// network takes several per resumption: 1 MiB (256 KiB before session 17; an application that
    /// hands each element to a blocking write, as `meshcat` does, makes a quarter of the hops).
    static let maxElementBytes = 1024 * 1024

    init(name: String, peer: PeerID, key: StreamKey, shell: StreamShell) {
        self.name = name
        self.peer = peer
        self.key = key
        self.shell = shell
    }

    /// Ends the stream from this side; the opener's writes and `finish()` throw ``StreamError``
    /// `cancelled` with `reason`. Does nothing once the stream is over. Returns once the close has
    /// been handed to the mesh.
    /// - Parameter reason: for people, at most 256 bytes (cut beyond).
    public func cancel(reason: String) async {
        await shell.cancel(key, reason: reason)
    }

    // MARK: Shell side

    /// Adds a chunk (possibly a slice of a received record); with `wake`, resumes a waiting reader.
    func deliver(_ chunk: Data, wake: Bool = true) {
        if wake {
            resume { $0.chunks.append(chunk) }
        } else {
            buffer.withLockedValue { $0.chunks.append(chunk) }
        }
    }

    /// Resumes a waiting reader (after chunks delivered without waking it).
    func wake() { resume { _ in } }
    func end() { resume { $0.ended = true } }
    func fail(_ error: StreamError) { resume { if !$0.ended { $0.error = $0.error ?? error } } }

    private func resume(_ change: (inout ChunkBuffer) -> Void) {
        let waiter = buffer.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            change(&state)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    fileprivate func next() async throws(StreamError) -> Data? {
        while true {
            enum Step { case chunks([Data], Int), done, failed(StreamError), wait }
            let step: Step = buffer.withLockedValue { state in
                guard state.head < state.chunks.count else {
                    if let error = state.error { return .failed(error) }
                    return state.ended ? .done : .wait
                }
                // Chunks that wait together are taken together, up to maxElementBytes (joined
                // below, outside the lock).
                var taken = [state.chunks[state.head]]
                var total = taken[0].count
                state.head += 1
                while state.head < state.chunks.count, total + state.chunks[state.head].count <= Self.maxElementBytes {
                    total += state.chunks[state.head].count
                    taken.append(state.chunks[state.head])
                    state.head += 1
                }
                if state.head == state.chunks.count {
                    state.chunks.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                return .chunks(taken, total)
            }
            switch step {
            case .chunks(let parts, let total):
                let chunk = Self.joined(parts, total: total)
                // Reported to the shell in batches (a hop onto its actor for every chunk made
                // the reader wait behind the packets it was handling), and always once the
                // buffer is empty, so the reader's credit never waits for more reading.
                let report = buffer.withLockedValue { state -> Int in
                    state.unreported += chunk.count
                    guard state.unreported >= Self.reportBytes || state.head == 0 else { return 0 }
                    defer { state.unreported = 0 }
                    return state.unreported
                }
                if report > 0 { await shell.consumed(report, of: key) }
                return chunk
            case .done:
                // The `finished` close was handed to the mesh before the end was (the stream
                // shell's order): an application that stops its session now does not cut it off.
                return nil
            case .failed(let error):
                throw error
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = buffer.withLockedValue { state -> Bool in
                        if state.head < state.chunks.count || state.ended || state.error != nil { return true }
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }

    /// The bytes of `parts` with indices from 0: a chunk that has them already as it is, else one
    /// copy (a slice of a received record, or several chunks joined).
    static func joined(_ parts: [Data], total: Int) -> Data {
        if parts.count == 1, parts[0].startIndex == 0 { return parts[0] }
        var joined = Data(capacity: total)
        for part in parts { joined.append(part) }
        return joined
    }

    /// Iterates the chunks; one consumer.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let stream: MeshInputStream
        /// The next chunk, `nil` after the stream's end.
        /// - Throws: ``StreamError`` when the stream ended otherwise.
        public mutating func next() async throws(StreamError) -> Data? { try await stream.next() }
    }

    /// An iterator over the chunks.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }
}

/// A stream's name on this node: the other node, its id, and whether this node reads it.
struct StreamKey: Hashable, Sendable {
    var peer: NodeID
    var id: UInt64
    /// Whether this node reads the stream (the other node opened it).
    var reader: Bool
}
