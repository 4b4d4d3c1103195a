import struct Foundation.Data
import struct Foundation.Date
import Logging
import MeshLink
import MeshRatchet
import MeshRouting
import MeshTrust
import MeshWire
import NIOConcurrencyHelpers
import NIOCore

/// The shell around the mesh node's value, ``MeshNodeStateMachine`` (PROTOCOL.md §13): it owns the
/// value, gives every input the time and randomness, and holds whoever waits for a pong.
///
/// A lock-holding final class rather than an actor: routed packets are handled on the event loop of
/// the link they came on (the session's `LinkInbound`, the one delivery path, takes no task hop),
/// and an actor would add a hop per packet. Each input takes the one lock for the length of the
/// value's input (the router's work; a received packet's signature check or open runs between two
/// holds of the lock), which is short and never waits; the caller executes the returned ``Step`` outside it.
///
/// Time comes from an event loop's `now` (the session's timer loop), so a loop with virtual time
/// (NIO's testing loops) gives the node virtual time; wall-clock milliseconds (what sealed packets
/// and broadcasts carry) come from `Date`.
///
/// This type is thread-safe. (`package`: the fuzz entry points of `MeshFuzz` drive it with hostile packets.)
package final class MeshNode: Sendable {
    /// What to do after an input.
    package typealias Step = MeshNodeStateMachine.Step
    /// A message for an application channel.
    package typealias ChannelDelivery = MeshNodeStateMachine.ChannelDelivery

    private struct Guarded: Sendable {
        var machine: MeshNodeStateMachine
        /// Whoever waits for a ping's pong, by nonce (the value keeps where each ping stands).
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
    }

    let identity: LocalIdentity
    /// The node's end-to-end sessions and prekeys (the value's own, shared).
    let endToEnd: EndToEndStore
    private let logger: Logger
    private let state: NIOLockedValueBox<Guarded>
    private let clock: @Sendable () -> NIODeadline
    private let origin: NIODeadline
    private let wall: @Sendable () -> Date

    /// Creates the node with no neighbours.
    /// - Parameters:
    ///   - peer: this node's identity and name.
    ///   - configuration: the router's limits and timings.
    ///   - logger: where dropped packets are logged.
    ///   - clock: the event loop whose `now` the node runs on; `nil` for the system's uptime clock.
    package init(peer: LocalPeer, configuration: RoutingConfiguration, logger: Logger, clock: (any EventLoop)? = nil) {
        self.identity = peer.identity
        self.logger = logger
        if let clock {
            self.clock = { clock.now }
            let sessionClock = SessionClock(loop: clock)
            self.wall = { sessionClock.date }
        } else {
            self.clock = { NIODeadline.now() }
            self.wall = { Date() }
        }
        self.origin = self.clock()
        // Sequences start at the wall clock so that a restarted node's adverts replace its old ones (§13.2).
        let initialSequence = UInt64(clamping: max(0, Self.nowMilliseconds))
        let machine = MeshNodeStateMachine(peer: peer, configuration: configuration, initialSequence: initialSequence,
                                           now: .zero, logger: logger)
        self.endToEnd = machine.endToEnd
        self.state = NIOLockedValueBox(Guarded(machine: machine))
    }

    /// The node's instant now: the time since it was created, on its clock.
    var now: RouterInstant {
        let (elapsed, overflow) = clock().uptimeNanoseconds.subtractingReportingOverflow(origin.uptimeNanoseconds)
        return RouterInstant(offset: overflow ? .zero : .nanoseconds(Int64(clamping: elapsed)))
    }

    /// The machine's wall clock in Unix milliseconds (prekey ages, sequence starts).
    static var nowMilliseconds: Int64 { milliseconds(Date()) }

    /// The wall clock in Unix milliseconds as the node's loop moves it, for what packets carry and
    /// are checked against (the replay window, §13.6; the pong budget, §13.10): the machine's on a
    /// real loop, moving with virtual time on a test loop (``SessionClock/date``).
    var wallMilliseconds: Int64 { Self.milliseconds(wall()) }

    private static func milliseconds(_ date: Date) -> Int64 {
        let milliseconds = date.timeIntervalSince1970 * 1000
        return milliseconds.isFinite ? Int64(exactly: milliseconds.rounded(.down)) ?? 0 : 0
    }

    /// Runs an input on the value with the time now.
    private func input<Result>(_ body: (inout MeshNodeStateMachine, RouterInstant) -> Result) -> Result {
        state.withLockedValue { state in body(&state.machine, now) }
    }

    // MARK: Queries

    /// This node as adverts, broadcasts and sealed packets name it (``rename(_:)`` changes it).
    var me: PeerID { state.withLockedValue { $0.machine.me } }

    /// The nodes this node can reach now, nearest first.
    var reachable: [MeshRoute] { state.withLockedValue { $0.machine.reachable } }

    /// The route to one node, if it is reachable.
    func route(to node: NodeID) -> MeshRoute? { state.withLockedValue { $0.machine.route(to: node) } }

    /// The neighbour packets to a node go to first, if it is reachable.
    func nextHop(to node: NodeID) -> NodeID? { state.withLockedValue { $0.machine.nextHop(to: node) } }

    /// The peer handle of a node known from its advert or handshake.
    func peer(_ node: NodeID) -> PeerID? { state.withLockedValue { $0.machine.peer(node) } }

    /// A node's verified Ed25519 identity key, if known.
    func identityKey(of node: NodeID) -> Data? { state.withLockedValue { $0.machine.identityKey(of: node) } }

    /// The attachment a node's latest verified advert carries for a channel (§13.12).
    func attachment(of node: NodeID, channel: UInt32) -> Data? {
        state.withLockedValue { $0.machine.attachment(of: node, channel: channel) }
    }

    /// When the router next needs ``timerFired()``, as an offset on ``now``'s scale.
    var nextDeadline: Duration? { state.withLockedValue { $0.machine.nextDeadline?.offset } }

    /// Every node's latest verified advert (the topology as this node sees it).
    var topology: [MeshTopologyEntry] { state.withLockedValue { $0.machine.topology } }

    /// How long a neighbour's broadcast must wait for its budget (§13.11), `nil` when it may go on.
    func budgetWait(_ routed: RoutedPayload, from neighbor: NodeID) -> Duration? {
        input { machine, now in machine.budgetWait(routed, from: neighbor, now: now) }
    }

    // MARK: Inputs

    /// A link to a neighbour was admitted (see ``MeshNodeStateMachine/neighborUp(_:staticKey:latency:now:)``).
    package func neighborUp(_ peer: PeerID, staticKey: Data, identityKey: Data? = nil, prekey: SignedPrekey? = nil,
                            latency: Duration?) -> Step {
        input { machine, now in
            machine.neighborUp(peer, staticKey: staticKey, identityKey: identityKey, prekey: prekey, latency: latency, now: now)
        }
    }

    /// Rotates this node's prekey when it is due (weekly, §19.1); a new advert publishes a new one.
    func rotatePrekeyIfDue() -> Step {
        guard endToEnd.rotatePrekeyIfDue() != nil else { return Step() }
        return input { machine, now in machine.prekeyChanged(now: now) }
    }

    /// Learns the key rotation a neighbour's handshake carried (§20.2).
    func learnRotations(_ statements: [KeyRotationPayload], identityKey: Data, displayName: String) -> [SessionEvent] {
        input { machine, _ in machine.learnRotations(statements, identityKey: identityKey, displayName: displayName) }
    }

    /// The verified statements that lead to a node's current key, newest first (§20.2).
    func keyRotations(of node: NodeID) -> [KeyRotation] { state.withLockedValue { $0.machine.keyRotations(of: node) } }

    /// This node's display name changed.
    func rename(_ peer: PeerID) -> Step {
        input { machine, now in machine.rename(peer, now: now) }
    }

    /// Sets or removes this node's attachment for a channel (§13.12).
    func setAttachment(_ data: Data?, channel: UInt32) -> Step {
        input { machine, now in machine.setAttachment(data, channel: channel, now: now) }
    }

    /// A neighbour's link ended.
    func neighborDown(_ node: NodeID) -> Step {
        input { machine, now in machine.neighborDown(node, now: now) }
    }

    /// A neighbour's link measured a round trip.
    func neighborLatency(_ node: NodeID, _ latency: Duration) -> Step {
        input { machine, now in machine.neighborLatency(node, latency, now: now) }
    }

    /// The router's timer is due.
    func timerFired() -> Step {
        input { machine, now in machine.timerFired(now: now) }
    }

    /// A neighbour sent a routed packet; whoever waits for a pong it answers is resumed.
    ///
    /// The value's three phases of receiving, with the costly middle one (the signature check of an
    /// advert or broadcast, the open of a packet sealed for this node) outside the lock, so that
    /// links on other event loops are not held up meanwhile.
    package func received(_ routed: RoutedPayload, from neighbor: NodeID) -> Step {
        let milliseconds = wallMilliseconds
        let checked: MeshNodeStateMachine.Checked
        // The end-to-end store's lock is taken before the node's, not inside it: a store busy writing
        // its files must not hold up the node's other links.
        let work = MeshNodeStateMachine.openingWork(of: routed, identity: identity, endToEnd: endToEnd)
        switch state.withLockedValue({ $0.machine.admit(routed, from: neighbor, now: now, work: work) }) {
        case .violation(let reason):
            checked = .violation(reason)
        case .dropped:
            return Step()
        case .admitted(let header, let originKey):
            checked = MeshNodeStateMachine.check(routed, header: header, originKey: originKey, from: neighbor, identity: identity,
                                                 endToEnd: endToEnd, nowMilliseconds: milliseconds, logger: logger)
        }
        var random = SystemRandomNumberGenerator()
        let (step, answered) = state.withLockedValue { state in
            let step = state.machine.apply(checked, received: routed, from: neighbor, now: now, nowMilliseconds: milliseconds, random: &random)
            var answered: [CheckedContinuation<Bool, Never>] = []
            for nonce in step.answeredPings {
                guard let waiter = state.waiters.removeValue(forKey: nonce) else { continue }
                state.machine.forgetPing(nonce)
                answered.append(waiter)
            }
            return (step, answered)
        }
        for waiter in answered { waiter.resume(returning: true) }
        return step
    }

    /// Sends a signed broadcast to every node within the hop limit.
    /// - Returns: the step (no sends when there is no neighbour).
    func broadcast(_ content: BroadcastPayload.OneOf_Content, sentAt: Int64) -> Step {
        var random = SystemRandomNumberGenerator()
        return state.withLockedValue { state in state.machine.broadcast(content, sentAt: sentAt, now: now, random: &random) }
    }

    /// Seals content for a node and routes it.
    /// - Returns: the step, or `nil` when the node is not reachable (or its keys are unknown).
    func sendSealed(_ content: SealedPayload.OneOf_Content, to node: NodeID) throws(EndToEndError) -> Step? {
        let milliseconds = wallMilliseconds
        var random = SystemRandomNumberGenerator()
        let result: Result<Step?, EndToEndError> = state.withLockedValue { state in
            do throws(EndToEndError) {
                return .success(try state.machine.sendSealed(content, to: node, now: now, nowMilliseconds: milliseconds, random: &random))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: Pings (§13.10)

    /// Starts a ping: its fresh nonce, registered before the ping is sent.
    func startPing() -> UInt64 {
        var random = SystemRandomNumberGenerator()
        return state.withLockedValue { $0.machine.startPing(random: &random) }
    }

    /// Waits for the pong of a registered ping: `true` when it came, `false` after ``cancelPing(_:)``
    /// (or when somebody else waits for it already).
    func waitForPong(_ nonce: UInt64) async -> Bool {
        await withCheckedContinuation { continuation in
            let ready: Bool? = state.withLockedValue { state in
                switch state.machine.ping(nonce) {
                case .sent? where state.waiters[nonce] == nil:
                    state.waiters[nonce] = continuation
                    return nil
                case .answered?:
                    state.machine.forgetPing(nonce)
                    return true
                case .sent?, nil:
                    return false
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Gives up waiting for a pong.
    func cancelPing(_ nonce: UInt64) {
        let waiter = state.withLockedValue { state in
            state.machine.forgetPing(nonce)
            return state.waiters.removeValue(forKey: nonce)
        }
        waiter?.resume(returning: false)
    }
}
