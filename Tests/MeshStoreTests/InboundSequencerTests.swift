import Foundation
import MeshStore
import Testing

@Suite("InboundSequencer")
struct InboundSequencerTests {
    static let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let timeout = Duration.seconds(120)

    static func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    @Test("in order: each message is delivered as it arrives")
    func inOrder() {
        var sequencer = InboundSequencer(maxHeld: 10)
        for sequence in UInt64(1)...3 {
            let decision = sequencer.received(sequence: sequence, floor: sequence, now: Self.t0)
            #expect(decision == .init(placement: .inOrder, deliveries: [.incoming]))
        }
        #expect(sequencer.nextExpected == 4)
        #expect(sequencer.held.isEmpty)
    }

    @Test("a gap holds later messages; filling it releases them in order")
    func gapThenFill() {
        var sequencer = InboundSequencer(maxHeld: 10)
        #expect(sequencer.received(sequence: 1, floor: 1, now: Self.t0).deliveries == [.incoming])
        #expect(sequencer.received(sequence: 3, floor: 2, now: Self.t0) == .init(placement: .held, deliveries: []))
        #expect(sequencer.received(sequence: 4, floor: 2, now: Self.t0) == .init(placement: .held, deliveries: []))
        #expect(Set(sequencer.held.keys) == [3, 4])
        let fill = sequencer.received(sequence: 2, floor: 2, now: Self.at(1))
        #expect(fill == .init(placement: .inOrder, deliveries: [.incoming, .held(3), .held(4)]))
        #expect(sequencer.nextExpected == 5)
        #expect(sequencer.held.isEmpty)
    }

    @Test("a floor above the gap gives it up: held messages below the floor are released")
    func floorSkipsGap() {
        var sequencer = InboundSequencer(maxHeld: 10)
        _ = sequencer.received(sequence: 1, floor: 1, now: Self.t0)
        #expect(sequencer.received(sequence: 3, floor: 2, now: Self.t0).placement == .held)
        // The sender gave up on 2: its next message carries floor 4.
        let decision = sequencer.received(sequence: 5, floor: 4, now: Self.at(1))
        #expect(decision == .init(placement: .held, deliveries: [.held(3)]))
        #expect(sequencer.nextExpected == 4)
        // A floor passing everything held releases the rest; the message at the floor is in order.
        let next = sequencer.received(sequence: 6, floor: 6, now: Self.at(2))
        #expect(next == .init(placement: .inOrder, deliveries: [.held(5), .incoming]))
        #expect(sequencer.nextExpected == 7)
    }

    @Test("a held message that waited the hold timeout is released with everything held below it")
    func holdTimeout() {
        var sequencer = InboundSequencer(maxHeld: 10)
        _ = sequencer.received(sequence: 1, floor: 1, now: Self.t0)
        _ = sequencer.received(sequence: 3, floor: 2, now: Self.t0)
        _ = sequencer.received(sequence: 6, floor: 2, now: Self.at(100))
        #expect(sequencer.nextDeadline(holdTimeout: Self.timeout) == Self.at(120))
        #expect(sequencer.timedOut(now: Self.at(119), holdTimeout: Self.timeout).isEmpty)
        #expect(sequencer.timedOut(now: Self.at(120), holdTimeout: Self.timeout) == [3])
        #expect(sequencer.nextExpected == 4)
        // 6 waits its own timeout for 4 and 5.
        #expect(sequencer.nextDeadline(holdTimeout: Self.timeout) == Self.at(220))
        #expect(sequencer.timedOut(now: Self.at(220), holdTimeout: Self.timeout) == [6])
        #expect(sequencer.nextExpected == 7)
        #expect(sequencer.nextDeadline(holdTimeout: Self.timeout) == nil)
    }

    @Test("the timeout of a later-held high sequence releases lower ones held after it, in order")
    func timeoutReleasesBelow() {
        var sequencer = InboundSequencer(maxHeld: 10)
        _ = sequencer.received(sequence: 1, floor: 1, now: Self.t0)
        _ = sequencer.received(sequence: 9, floor: 2, now: Self.t0)
        _ = sequencer.received(sequence: 4, floor: 2, now: Self.at(60))
        #expect(sequencer.timedOut(now: Self.at(120), holdTimeout: Self.timeout) == [4, 9])
        #expect(sequencer.nextExpected == 10)
    }

    @Test("the timeout is followed by the drain of consecutive held messages")
    func timeoutDrains() {
        var sequencer = InboundSequencer(maxHeld: 10)
        _ = sequencer.received(sequence: 1, floor: 1, now: Self.t0)
        _ = sequencer.received(sequence: 3, floor: 2, now: Self.t0)
        _ = sequencer.received(sequence: 4, floor: 2, now: Self.at(50))
        #expect(sequencer.timedOut(now: Self.at(120), holdTimeout: Self.timeout) == [3, 4])
        #expect(sequencer.nextExpected == 5)
    }

    @Test("behind nextExpected (an unseen id: a late message or a restarted sender) is delivered at once")
    func behind() {
        var sequencer = InboundSequencer(nextExpected: 10, held: [:], maxHeld: 10)
        #expect(sequencer.received(sequence: 4, floor: 4, now: Self.t0) == .init(placement: .outOfOrder, deliveries: [.incoming]))
        #expect(sequencer.nextExpected == 10)
    }

    @Test("a sequence equal to a held one (another id) is delivered at once; the held one stays")
    func duplicateSequence() {
        var sequencer = InboundSequencer(maxHeld: 10)
        _ = sequencer.received(sequence: 1, floor: 1, now: Self.t0)
        _ = sequencer.received(sequence: 3, floor: 2, now: Self.t0)
        #expect(sequencer.received(sequence: 3, floor: 2, now: Self.at(1)) == .init(placement: .outOfOrder, deliveries: [.incoming]))
        #expect(sequencer.held == [3: Self.t0])
        #expect(sequencer.received(sequence: 2, floor: 2, now: Self.at(2)).deliveries == [.incoming, .held(3)])
    }

    @Test("sender reset: its numbering restarts at 1 and every new message is delivered, none lost")
    func senderReset() {
        var sequencer = InboundSequencer(maxHeld: 10)
        for sequence in UInt64(1)...50 { _ = sequencer.received(sequence: sequence, floor: sequence, now: Self.t0) }
        #expect(sequencer.nextExpected == 51)
        for sequence in UInt64(1)...50 {
            let decision = sequencer.received(sequence: sequence, floor: sequence, now: Self.at(10))
            #expect(decision == .init(placement: .outOfOrder, deliveries: [.incoming]))
        }
        // Past the old numbering, order holds again.
        #expect(sequencer.received(sequence: 52, floor: 51, now: Self.at(11)).placement == .held)
        #expect(sequencer.received(sequence: 51, floor: 51, now: Self.at(11)).deliveries == [.incoming, .held(52)])
    }

    @Test("receiver reset: the first message sets nextExpected to its floor")
    func receiverReset() {
        // Everything before 57 was delivered: the sender's floor is the message itself.
        var fresh = InboundSequencer(maxHeld: 10)
        #expect(fresh.received(sequence: 57, floor: 57, now: Self.t0) == .init(placement: .inOrder, deliveries: [.incoming]))
        #expect(fresh.nextExpected == 58)
        // 55 and 56 are still undelivered at the sender: 57 waits for their retransmission.
        var waiting = InboundSequencer(maxHeld: 10)
        #expect(waiting.received(sequence: 57, floor: 55, now: Self.t0).placement == .held)
        #expect(waiting.nextExpected == 55)
        #expect(waiting.received(sequence: 55, floor: 55, now: Self.t0).deliveries == [.incoming])
        #expect(waiting.received(sequence: 56, floor: 55, now: Self.t0).deliveries == [.incoming, .held(57)])
    }

    @Test("more than maxHeld held messages: all are released in order")
    func heldBound() {
        var sequencer = InboundSequencer(maxHeld: 3)
        _ = sequencer.received(sequence: 1, floor: 1, now: Self.t0)
        for sequence in UInt64(3)...5 {
            #expect(sequencer.received(sequence: sequence, floor: 2, now: Self.t0).placement == .held)
        }
        let overflow = sequencer.received(sequence: 7, floor: 2, now: Self.t0)
        #expect(overflow == .init(placement: .held, deliveries: [.held(3), .held(4), .held(5), .held(7)]))
        #expect(sequencer.nextExpected == 8)
        #expect(sequencer.held.isEmpty)
    }

    @Test("a floor above the sequence or of 0 is clamped; huge sequences do not trap")
    func clamping() {
        var sequencer = InboundSequencer(maxHeld: 10)
        #expect(sequencer.received(sequence: 5, floor: 9, now: Self.t0).deliveries == [.incoming])
        #expect(sequencer.nextExpected == 6)
        var zero = InboundSequencer(maxHeld: 10)
        #expect(zero.received(sequence: 2, floor: 0, now: Self.t0).placement == .held)
        #expect(zero.nextExpected == 1)
        var huge = InboundSequencer(maxHeld: 10)
        #expect(huge.received(sequence: .max, floor: .max, now: Self.t0).deliveries == [.incoming])
        #expect(huge.nextExpected == .max)
    }
}
