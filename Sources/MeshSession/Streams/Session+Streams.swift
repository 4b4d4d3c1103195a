import struct Foundation.Data
import NIOConcurrencyHelpers

extension Session {
    // MARK: Streams (PROTOCOL.md §18)

    /// The channel limits of the reserved streams channel: full-size packets, a rate that lets one
    /// node carry streams at link speed (16,000 packets a second, about 1 GB/s of full chunks,
    /// 32,000 at once, from one node: each stream's window bounds its data anyway), on a queue
    /// that waits rather than drops; packets to a neighbour travel on the link (§6.3).
    static var streamChannelLimits: ChannelLimits {
        var limits = ChannelLimits()
        limits.maxMessageSize = Session.maxChannelPayload
        limits.maxBroadcastSize = 1
        limits.messagesPerSecond = 16_000
        limits.burst = 32_000
        limits.inboundCapacity = 1_024
        limits.maxAttachmentSize = 0
        limits.directToNeighbours = true
        limits.deliversSlices = true
        limits.wakesOncePerRead = true
        return limits
    }

    /// Starts accepting streams from other nodes and returns them as they open, in the model of
    /// Multipeer Connectivity's `session(_:didReceive:withName:fromPeer:)`.
    ///
    /// Until this is called, every stream another node opens is refused with
    /// ``StreamCloseCode/refused``. After it, an open is accepted within `limits` (streams per
    /// node and in all, the open rate, and the streams not taken yet; beyond them: `busy`) and
    /// appears here; its bytes arrive on the ``MeshInputStream`` itself. Calling it again returns
    /// the same queue (the first call's limits stay).
    /// - Parameter limits: the limits of streams this node reads.
    /// - Returns: the incoming streams; the sequence ends when the session stops. One consumer.
    /// - Throws: ``SessionError`` `invalidStream` for limits out of range, `channelInUse` when
    ///   the application registered ``ChannelID/streams`` itself.
    ///
    /// This method is thread-safe.
    public func acceptStreams(limits: StreamLimits = StreamLimits()) async throws(SessionError) -> EventQueue<MeshInputStream> {
        if let problem = limits.problem { throw .invalidStream(problem) }
        return try await streams().accept(limits: limits)
    }

    /// Opens a byte stream to a node anywhere in the mesh and waits until it accepts, in the
    /// model of Multipeer Connectivity's `startStream(withName:toPeer:)`, across hops.
    ///
    /// The stream is reliable and ordered whatever packets relays drop, flow-controlled by the
    /// reader (a slow reader makes ``MeshOutputStream/write(_:)`` wait, so this node holds at most
    /// ``StreamLimits/window`` bytes of it), and ends with a reason on both sides when either side
    /// cancels it or the other node stops answering (PROTOCOL.md §18).
    /// - Parameters:
    ///   - name: the stream's name for the reader, at most 255 bytes of UTF-8.
    ///   - peer: a node this session can reach (a neighbour or across relays).
    ///   - limits: this stream's limits (chunk size, window held, timeouts).
    /// - Returns: the writing side.
    /// - Throws: ``SessionError`` `notReachable` when there is no route to `peer` (or it stopped
    ///   answering while opening), `streamRefused` when it refused (it does not accept streams,
    ///   or is busy), `invalidStream` for a long name or limits out of range, `notRunning` once
    ///   the session stopped.
    ///
    /// This method is thread-safe.
    public func startStream(withName name: String, to peer: PeerID, limits: StreamLimits = StreamLimits()) async throws(SessionError) -> MeshOutputStream {
        guard name.utf8.count <= StreamWire.maxNameBytes else {
            throw .invalidStream("stream name of \(name.utf8.count) bytes exceeds \(StreamWire.maxNameBytes)")
        }
        if let problem = limits.problem { throw .invalidStream(problem) }
        guard peer.id != localID else { throw .invalidStream("a stream to this node itself") }
        guard route(to: peer) != nil else { throw .notReachable(peer) }
        switch try await streams().open(name: name, to: peer, limits: limits) {
        case .success(let stream):
            return stream
        case .failure(let error):
            switch error.code {
            case .timedOut: throw .notReachable(peer)
            case .closed: throw .notRunning()
            default: throw .streamRefused(peer, error)
            }
        }
    }

    /// The streams' shell.
    var startedStreamShell: StreamShell? { streamShell.withLockedValue { $0 } }

    /// Registers the streams channel when the session is made, so that a node whose application
    /// does not accept streams refuses them with a reason (rather than dropping the opens as a
    /// channel nobody registered). Costs one waiting task until the first stream.
    func installStreams() {
        _ = try? streams()
    }

    /// The streams' shell, registering the reserved channel on first use.
    private func streams() throws(SessionError) -> StreamShell {
        let result: Result<StreamShell, SessionError> = streamShell.withLockedValue { shell in
            if let shell { return .success(shell) }
            do throws(SessionError) {
                let channel = try register(channel: .streams, limits: Self.streamChannelLimits)
                let made = StreamShell(channel: channel, clock: clock, localID: localID, logger: logger)
                made.run()
                shell = made
                return .success(made)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
