import MeshWire
import NIOConcurrencyHelpers
import NIOCore

/// Writes envelopes to one link with exact back-pressure (PROTOCOL.md §10).
///
/// Every write is counted as in flight until the socket has taken it (its write promise
/// completes). A writer that finds more than ``highWaterMark`` bytes in flight waits until
/// completions bring it under ``lowWaterMark``. Completions happen only when the link's event loop
/// runs its socket, so a sender can neither buffer without bound nor keep that loop from reading
/// (a sender that never suspended would starve the loop when tasks run on it).
///
/// This type is thread-safe.
public final class LinkWriter: Sendable {
    /// Bytes in flight above which writers wait.
    public let highWaterMark: Int
    /// Bytes in flight at which waiting writers resume.
    public let lowWaterMark: Int
    private let channel: any Channel

    private struct State {
        var inFlight = 0
        var waiters: [CheckedContinuation<Void, any Error>] = []
        var closed = false
    }

    private let state = NIOLockedValueBox(State())

    /// The link was closed; the message was not sent.
    public struct Closed: Error, CustomStringConvertible {
        /// "the link is closed".
        public var description: String { "the link is closed" }
    }

    /// Creates a writer for a link's channel.
    /// - Parameters:
    ///   - channel: the link's channel (its pipeline takes ``Envelope``s).
    ///   - highWaterMark: bytes in flight above which writers wait.
    ///   - lowWaterMark: bytes in flight at which they resume.
    public init(channel: any Channel, highWaterMark: Int, lowWaterMark: Int) {
        self.channel = channel
        self.highWaterMark = highWaterMark
        self.lowWaterMark = lowWaterMark
        channel.closeFuture.whenComplete { [state] _ in
            let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, any Error>] in
                state.closed = true
                defer { state.waiters = [] }
                return state.waiters
            }
            waiters.forEach { $0.resume(throwing: Closed()) }
        }
    }

    /// Bytes written but not yet taken by the socket.
    public var bytesInFlight: Int { state.withLockedValue { $0.inFlight } }

    /// Queues an envelope, waiting first while too much is in flight.
    /// - Parameters:
    ///   - envelope: the envelope.
    ///   - size: its approximate size on the wire, for the accounting.
    /// - Throws: ``Closed`` when the link is closed.
    public func write(_ envelope: Envelope, size: Int) async throws {
        try await waitForRoom()
        let admitted = state.withLockedValue { state -> Bool in
            guard !state.closed else { return false }
            state.inFlight += size
            return true
        }
        guard admitted else { throw Closed() }
        channel.writeAndFlush(envelope).whenComplete { [state, lowWaterMark] _ in
            let ready = state.withLockedValue { state -> [CheckedContinuation<Void, any Error>] in
                state.inFlight -= size
                guard state.inFlight <= lowWaterMark else { return [] }
                defer { state.waiters = [] }
                return state.waiters
            }
            ready.forEach { $0.resume() }
        }
    }

    private func waitForRoom() async throws {
        let mustWait = state.withLockedValue { state -> Bool? in
            if state.closed { return nil }
            return state.inFlight > highWaterMark
        }
        guard let mustWait else { throw Closed() }
        guard mustWait else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLockedValue { state -> Bool? in
                if state.closed { return nil }
                if state.inFlight <= lowWaterMark { return true }
                state.waiters.append(continuation)
                return false
            }
            switch outcome {
            case nil: continuation.resume(throwing: Closed())
            case true?: continuation.resume()
            case false?: break
            }
        }
    }
}
