import NIOCore

/// The sealed frames of one link that are not yet passed to the socket (PROTOCOL.md §3: several
/// frames may share one write): ``LinkHandler`` seals each message into ``buffer`` and passes the
/// buffer down at the next flush, so a burst of small messages costs one buffer, one pipeline
/// write and one syscall. The buffer is reused from flush to flush once the socket has let go of it.
///
/// A pure value: it says what to write; the handler writes it.
struct OutgoingFrames {
    /// What is buffered above which a new message first sends the buffer (without a flush), so
    /// that large messages are not copied into a growing buffer.
    static let coalescingLimit = 64 * 1024

    /// The frames sealed since the last write down (its readable bytes).
    var buffer = ByteBuffer()
    /// Whether ``buffer``'s bytes were passed down (it is cleared before the next message).
    private var passedDown = false
    /// The promise of the writes the buffer holds (later ones cascade from it).
    private var promise: EventLoopPromise<Void>?
    /// Bytes passed down so far.
    private(set) var bytesPassedDown = 0

    /// A buffer and the promise to write it with.
    typealias Write = (bytes: ByteBuffer, promise: EventLoopPromise<Void>?)

    /// Readies the buffer for a message of about `size` bytes.
    /// - Returns: what to write first (the buffer so far, when the message would take it over
    ///   ``coalescingLimit``), and the writer index to roll back to if sealing fails.
    mutating func prepare(forMessageOf size: Int) -> (first: Write?, mark: Int) {
        var first: Write?
        if buffer.readableBytes > 0, buffer.readableBytes + size > Self.coalescingLimit {
            first = take(promise: nil)
        }
        if passedDown {
            passedDown = false
            // A large buffer is not kept for the small messages after it. clear() allocates
            // afresh only while the socket still holds the bytes passed down from it.
            if buffer.capacity > Self.coalescingLimit * 2 {
                buffer = ByteBuffer()
            } else {
                buffer.clear()
            }
        }
        return (first, buffer.writerIndex)
    }

    /// Drops what a failed seal wrote after `mark`.
    mutating func rollBack(to mark: Int) {
        buffer.moveWriterIndex(to: mark)
    }

    /// A message was sealed into the buffer; `promise` completes when the buffer is written.
    mutating func sealed(promise: EventLoopPromise<Void>?) {
        guard let promise else { return }
        if let waiting = self.promise {
            waiting.futureResult.cascade(to: promise)
        } else {
            self.promise = promise
        }
    }

    /// Takes what to pass down: the buffered frames with the promise of their writes and
    /// `promise`; an empty buffer when only a promise waits (it completes in order with the
    /// writes before it); `nil` when there is nothing to write.
    mutating func take(promise: EventLoopPromise<Void>?) -> Write? {
        var promise = promise
        if let waiting = self.promise {
            self.promise = nil
            if let promise { waiting.futureResult.cascade(to: promise) }
            promise = waiting
        }
        guard buffer.readableBytes > 0 else {
            return promise.map { (ByteBuffer(), $0) }
        }
        let bytes = buffer
        bytesPassedDown += bytes.readableBytes
        buffer.moveReaderIndex(to: buffer.writerIndex)
        passedDown = true
        return (bytes, promise)
    }

    /// The link is gone: the writes still buffered fail.
    mutating func fail(_ error: any Error) {
        let waiting = promise
        promise = nil
        buffer.clear()
        waiting?.fail(error)
    }
}
