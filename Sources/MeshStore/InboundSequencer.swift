import Foundation

/// The delivery order of one sender's private messages at the receiver (pure; no I/O, no clock).
///
/// Each private message carries a per-(sender → destination) `sequence` (1, 2, 3, … persistent at
/// the sender) and a `floor`: the lowest sequence the sender still holds undelivered for this
/// destination, or its next sequence when it holds none. The receiver delivers in sequence order
/// and holds back messages after a gap until the gap fills. Duplicates are recognised **by id**
/// before this type is consulted (``MessageStore`` keeps the seen ids), so every input here is a
/// message the receiver has not seen: nothing it is given is ever dropped.
///
/// State: ``nextExpected`` (`nil` before the first message from the sender) and ``held`` (the
/// held-back sequences with the time each was held).
///
/// Rules, applied by ``received(sequence:floor:now:)`` in this order:
/// 1. **Clamping.** A floor above the message's own sequence is taken as the sequence (the
///    message itself is undelivered); a floor of 0 is taken as 1.
/// 2. **First message from a sender:** `nextExpected = floor`. After the receiver lost its
///    database the sender's numbering continues: a message whose sequence equals its floor is
///    delivered at once, and one above its floor waits for the lower ones, which the sender still
///    holds and will retransmit.
/// 3. **The floor passes a gap:** when `floor > nextExpected` the sender has given up on (or seen
///    delivered) everything below the floor: held messages below it are released in order and
///    `nextExpected = floor`.
/// 4. **In order:** `sequence == nextExpected` is delivered and `nextExpected` advances.
/// 5. **Behind:** `sequence < nextExpected` with an unseen id is delivered at once, out of order
///    rather than lost. This covers a sender that lost its database (its numbering restarts at 1:
///    its messages are delivered as they arrive until their sequences pass `nextExpected`, from
///    where the order holds again), and a late message whose gap was already given up.
/// 6. **Same sequence as a held message** (a restarted sender reusing a number): the new message
///    is delivered at once, out of order; the held one stays held.
/// 7. **Ahead:** `sequence > nextExpected` is held.
/// 8. **Drain:** held messages from `nextExpected` on are released while they are consecutive.
/// 9. **Held bound:** when more than ``maxHeld`` messages are held, all of them are released in
///    order and `nextExpected` moves past the highest (give up waiting rather than grow).
///
/// ``timedOut(now:holdTimeout:)``: when a held message has waited `holdTimeout`, the gaps below
/// it are given up: it and every held message below it are released in order, `nextExpected`
/// moves past it, and the drain (rule 8) follows. So no message waits longer than `holdTimeout`.
///
/// Every released sequence is removed from ``held``; a ``Delivery`` list is in the order the
/// application should see the messages (ascending, except an out-of-order incoming message,
/// which comes where it arrived).
public struct InboundSequencer: Sendable, Hashable {
    /// Where the incoming message went.
    public enum Placement: Sendable, Hashable {
        /// Delivered in order (rule 4).
        case inOrder
        /// Delivered at once although behind or beside the order (rules 5 and 6).
        case outOfOrder
        /// Held back until its gap fills, the floor passes it, the bound or the timeout (rule 7).
        case held
    }

    /// One message to hand to the application.
    public enum Delivery: Sendable, Hashable {
        /// The message just received.
        case incoming
        /// A previously held message with this sequence.
        case held(UInt64)
    }

    /// What ``received(sequence:floor:now:)`` decided.
    public struct Decision: Sendable, Hashable {
        /// Where the incoming message went.
        public var placement: Placement
        /// The messages now deliverable, in delivery order (may include earlier held ones).
        public var deliveries: [Delivery]

        /// Creates a decision.
        /// - Parameters:
        ///   - placement: where the incoming message went.
        ///   - deliveries: the messages now deliverable, in order.
        public init(placement: Placement, deliveries: [Delivery]) {
            self.placement = placement
            self.deliveries = deliveries
        }
    }

    /// The next sequence delivered in order; `nil` before the first message from the sender.
    public private(set) var nextExpected: UInt64?
    /// Held-back sequences and when each was held.
    public private(set) var held: [UInt64: Date]
    /// The most messages held at once before all are released (rule 9).
    public let maxHeld: Int

    /// Creates the state for a sender never heard from.
    /// - Parameter maxHeld: the held bound (at least 1).
    public init(maxHeld: Int) {
        self.init(nextExpected: nil, held: [:], maxHeld: maxHeld)
    }

    /// Restores a saved state.
    /// - Parameters:
    ///   - nextExpected: the saved ``nextExpected``.
    ///   - held: the saved ``held``.
    ///   - maxHeld: the held bound (at least 1).
    public init(nextExpected: UInt64?, held: [UInt64: Date], maxHeld: Int) {
        self.nextExpected = nextExpected
        self.held = held
        self.maxHeld = max(1, maxHeld)
    }

    // MARK: - Inputs

    /// A message with an unseen id arrived.
    /// - Parameters:
    ///   - sequence: its sequence (at least 1).
    ///   - floor: the sender's floor it carried.
    ///   - now: the current time (recorded for a held message).
    /// - Returns: where it went and what is now deliverable.
    public mutating func received(sequence: UInt64, floor: UInt64, now: Date) -> Decision {
        let floor = Swift.max(1, Swift.min(floor, sequence))
        var next = nextExpected ?? floor
        var deliveries: [Delivery] = []
        if floor > next {
            for passed in held.keys.filter({ $0 < floor }).sorted() {
                held[passed] = nil
                deliveries.append(.held(passed))
            }
            next = floor
        }
        let placement: Placement
        if sequence == next {
            placement = .inOrder
            deliveries.append(.incoming)
            next = next.incremented
        } else if sequence < next || held[sequence] != nil {
            placement = .outOfOrder
            deliveries.append(.incoming)
        } else {
            placement = .held
            held[sequence] = now
        }
        nextExpected = next
        drain(into: &deliveries)
        if held.count > maxHeld {
            release(through: held.keys.max() ?? next, into: &deliveries)
        }
        return Decision(placement: placement, deliveries: deliveries)
    }

    /// Gives up on gaps that held messages have waited `holdTimeout` for.
    /// - Parameters:
    ///   - now: the current time.
    ///   - holdTimeout: how long a held message may wait.
    /// - Returns: the released held sequences, in order.
    public mutating func timedOut(now: Date, holdTimeout: Duration) -> [UInt64] {
        let cutoff = now.addingTimeInterval(-holdTimeout.timeInterval)
        guard let highest = held.filter({ $0.value <= cutoff }).keys.max() else { return [] }
        var deliveries: [Delivery] = []
        release(through: highest, into: &deliveries)
        return deliveries.compactMap {
            if case .held(let sequence) = $0 { sequence } else { nil }
        }
    }

    // MARK: - Queries

    /// When the longest-held message times out, for scheduling ``timedOut(now:holdTimeout:)``.
    /// - Parameter holdTimeout: how long a held message may wait.
    /// - Returns: the deadline, or `nil` when nothing is held.
    public func nextDeadline(holdTimeout: Duration) -> Date? {
        held.values.min()?.addingTimeInterval(holdTimeout.timeInterval)
    }

    // MARK: - Private

    /// Releases every held sequence up to `highest`, moves past it, and drains.
    private mutating func release(through highest: UInt64, into deliveries: inout [Delivery]) {
        for sequence in held.keys.filter({ $0 <= highest }).sorted() {
            held[sequence] = nil
            deliveries.append(.held(sequence))
        }
        if highest >= (nextExpected ?? 0) { nextExpected = highest.incremented }
        drain(into: &deliveries)
    }

    /// Rule 8: releases held sequences from ``nextExpected`` on while consecutive.
    private mutating func drain(into deliveries: inout [Delivery]) {
        guard var next = nextExpected else { return }
        while held.removeValue(forKey: next) != nil {
            deliveries.append(.held(next))
            next = next.incremented
        }
        nextExpected = next
    }
}

extension UInt64 {
    /// `self + 1`, saturating at `UInt64.max` (a peer's sequence never traps).
    fileprivate var incremented: UInt64 { self == .max ? .max : self + 1 }
}

extension Duration {
    /// The duration in seconds as a `TimeInterval`.
    var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
