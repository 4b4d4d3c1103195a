import Crypto
import Foundation
import MeshFiles
import MeshSession
import MeshWire
import Testing

/// A sender and a receiver state machine pumped against each other in memory, on virtual time.
private struct Pair {
    var sender: ResourceSendStateMachine
    var receiver: ResourceReceiveStateMachine?
    let content: Data
    var stored: [Int: Data] = [:]
    var senderResults: [ResourceSendStateMachine.Action] = []
    var receiverResults: [ResourceReceiveStateMachine.Action] = []
    var now = ContinuousClock.now
    var maxInFlight = 0
    /// Chunks lost on their next transmission (each once).
    var loseOnce: Set<Int> = []
    /// Offers lost on the way (the next ones).
    var loseOffers = 0

    init(content: Data, chunkSize: Int = 1_024, hash: Data? = nil) {
        self.content = content
        let offer = ResourceOffer(name: "report.pdf", size: UInt64(content.count),
                              sha256: hash ?? Data(SHA256.hash(data: content)), chunkSize: chunkSize)
        sender = ResourceSendStateMachine(id: .random(), offer: offer)
    }

    func chunk(_ index: Int) -> Data {
        let offer = sender.offer
        let start = Int(offer.offset(ofChunk: index))
        return content.subdata(in: start..<start + offer.length(ofChunk: index))
    }

    /// Runs sender actions; chunks in ``loseOnce`` are lost on the way (once).
    mutating func runSender(_ actions: [ResourceSendStateMachine.Action]) {
        maxInFlight = max(maxInFlight, sender.chunksInFlight)
        for action in actions {
            senderResults.append(action)
            switch action {
            case .sendOffer(let payload):
                if loseOffers > 0 {
                    loseOffers -= 1
                    continue
                }
                if var receiver {
                    let more = receiver.receivedOfferAgain()
                    self.receiver = receiver
                    runReceiver(more)
                } else {
                    let offer = try! ResourceOffer(validating: payload)
                    var receiver = ResourceReceiveStateMachine(id: sender.id, offer: offer, incarnation: 1, now: now)
                    let more = receiver.accept()
                    self.receiver = receiver
                    runReceiver(more)
                }
            case .sendChunk(let index):
                if loseOnce.remove(index) != nil { continue }
                guard var receiver else { continue }
                let more = receiver.receivedChunk(index: index, length: chunk(index).count, now: now)
                self.receiver = receiver
                runReceiver(more, chunk: (index, chunk(index)))
            default:
                break
            }
        }
    }

    mutating func runReceiver(_ actions: [ResourceReceiveStateMachine.Action], chunk: (Int, Data)? = nil) {
        for action in actions {
            receiverResults.append(action)
            switch action {
            case .write(let index):
                stored[index] = chunk!.1
            case .sendAck(let ack):
                runSender(sender.receivedAck(ack, now: now))
            case .verify:
                var whole = Data()
                for index in 0..<sender.offer.chunkCount { whole += stored[index] ?? Data() }
                var current = receiver!
                let more = current.verified(sha256: Array(SHA256.hash(data: whole)))
                receiver = current
                runReceiver(more)
            case .sendDone(let done):
                runSender(sender.receivedDone(done))
            case .sendCancel(let code, let reason):
                var cancel = ResourceCancelPayload()
                cancel.code = code.rawValue
                cancel.reason = reason
                runSender(sender.receivedCancel(cancel))
            default:
                break
            }
        }
    }

    mutating func start() { runSender(sender.start(now: now)) }

    mutating func advance(_ duration: Duration) {
        now += duration
        runSender(sender.timerFired(now: now))
    }

    var senderCompleted: Bool { senderResults.contains(.completed) }
    var receiverCompleted: Bool { receiverResults.contains(.completed) }
}

private func content(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
}

@Suite("Resource state machines (PROTOCOL.md §16)")
struct ResourceStateMachineTests {
    // MARK: Resuming (PROTOCOL.md §16.4.2)

    /// A pair stalled with chunk 20 of 40 lost: the receiver holds 0..<20 and 21..<36.
    private static func stalledPair() -> Pair {
        var pair = Pair(content: content(40 * 1_024))
        pair.loseOnce = [20]
        pair.start()
        #expect(!pair.senderCompleted)
        #expect(pair.receiver?.next == 20)
        return pair
    }

    @Test("a receiver restarted from a partial state (fewer chunks than it acknowledged) resumes: the sender rewinds to its new acknowledgement and the transfer completes, sending about the lost part again, not the whole")
    func receiverRestartResumes() throws {
        var pair = Self.stalledPair()
        let sentBefore = pair.sender.chunksSent
        // The crash lost everything from chunk 10 on (its state file said next = 10, plus 12).
        pair.stored = pair.stored.filter { $0.key < 10 || $0.key == 12 }
        var restored = ResourceReceiveStateMachine(restoring: pair.sender.id, offer: pair.sender.offer, next: 10, stored: [12],
                                                   incarnation: 2, now: pair.now)
        #expect(restored.resume().isEmpty)
        #expect(restored.bytesStored == 11 * 1_024)
        let actions = restored.senderReachable(now: pair.now)
        pair.receiver = restored
        guard actions.count == 2, actions.first == .resumed, case .sendAck(let ack) = actions.last else {
            Issue.record("expected resumed and an acknowledgement, got \(actions)"); return
        }
        #expect(ack.next == 10 && ack.received == [12] && ack.incarnation == 2)
        pair.runReceiver(actions)
        #expect(pair.senderResults.contains(.rewound(10)))
        #expect(pair.senderCompleted && pair.receiverCompleted)
        var whole = Data()
        for index in 0..<40 { whole += try #require(pair.stored[index]) }
        #expect(whole == pair.content)
        // 36 before the restart; afterwards 10..<40 less chunk 12 at most once each.
        #expect(pair.sender.chunksSent - sentBefore <= 29)
    }

    @Test("a sender that did not see the receiver restart learns it from the acknowledgement answering a chunk past the window")
    func pastWindowAnswerRewinds() {
        var pair = Self.stalledPair()
        var restored = ResourceReceiveStateMachine(restoring: pair.sender.id, offer: pair.sender.offer, next: 5, stored: [],
                                                   incarnation: 3, now: pair.now)
        _ = restored.senderReachable(now: pair.now)
        pair.stored = pair.stored.filter { $0.key < 5 }
        pair.receiver = restored
        // The sender retransmits chunk 20 on its timer; the answer carries the new incarnation.
        pair.advance(.seconds(4))
        #expect(pair.senderResults.contains(.rewound(5)))
        #expect(pair.senderCompleted && pair.receiverCompleted)
    }

    @Test("a restarted sender offers the same transfer again; the receiver's acknowledgement resumes it from what it holds")
    func senderRestartResumes() {
        var pair = Self.stalledPair()
        pair.sender = ResourceSendStateMachine(id: pair.sender.id, offer: pair.sender.offer)
        pair.senderResults = []
        pair.start()
        #expect(pair.senderResults.contains(.accepted))
        #expect(pair.senderCompleted && pair.receiverCompleted)
        // Chunk 20 and 36..<40: the 15 chunks the receiver held past 20 are not sent again.
        #expect(pair.sender.chunksSent == 5)
    }

    @Test("a restored receiver holding every chunk verifies at once; a confirmation completes a restarted sender still offering")
    func restoredCompleteAndLateConfirmation() {
        let offer = ResourceOffer(name: "a", size: 3 * 1_024, sha256: Data(count: 32), chunkSize: 1_024)
        var receiver = ResourceReceiveStateMachine(restoring: .random(), offer: offer, next: 3, stored: [], incarnation: 4, now: .now)
        #expect(receiver.state == .verifying)
        #expect(receiver.resume() == [.verify])
        var sender = ResourceSendStateMachine(id: .random(), offer: offer)
        _ = sender.start(now: .now)
        var done = ResourceDonePayload()
        done.sha256 = offer.sha256
        #expect(sender.receivedDone(done) == [.progress(offer.size), .completed])
    }

    @Test("a restored state is clamped: next past the end, chunks out of range or outside the window are ignored")
    func restoredStateClamped() {
        let offer = ResourceOffer(name: "a", size: 100 * 1_024, sha256: Data(count: 32), chunkSize: 1_024)
        let receiver = ResourceReceiveStateMachine(restoring: .random(), offer: offer, next: 50, stored: [-1, 49, 51, 80, 1_000],
                                                   incarnation: 5, now: .now, window: ResourceLimits.window)
        #expect(receiver.next == 50 && receiver.storedAhead == [51])
        let wide = ResourceReceiveStateMachine(restoring: .random(), offer: offer, next: 50, stored: [-1, 49, 51, 80, 1_000],
                                               incarnation: 5, now: .now)
        #expect(wide.window == ResourceLimits.receiveWindow && wide.storedAhead == [51, 80])
        let beyond = ResourceReceiveStateMachine(restoring: .random(), offer: offer, next: 5_000, stored: [], incarnation: 5, now: .now)
        #expect(beyond.next == 100 && beyond.state == .verifying)
    }


    @Test("a whole transfer, pumped in memory, stores every byte and both sides complete; never more than the window in flight")
    func wholeTransfer() {
        var pair = Pair(content: content(40 * 1_024 - 100))
        pair.start()
        #expect(pair.senderCompleted)
        #expect(pair.receiverCompleted)
        #expect(pair.sender.state == .finished)
        #expect(pair.receiver?.state == .finished)
        var whole = Data()
        for index in 0..<40 { whole += pair.stored[index]! }
        #expect(whole == pair.content)
        #expect(pair.maxInFlight <= ResourceLimits.window)
        #expect(pair.maxInFlight > 0)
    }

    @Test("the first acknowledgement opens a window of exactly `window` chunks")
    func windowLimitsChunksInFlight() {
        var sender = ResourceSendStateMachine(id: .random(), offer: ResourceOffer(name: "a", size: 100 * 1_024, sha256: Data(count: 32), chunkSize: 1_024))
        let now = ContinuousClock.now
        #expect(sender.start(now: now) == [.sendOffer(sender.offer.payload)])
        let actions = sender.receivedAck(ResourceAckPayload(), now: now)
        #expect(actions.first == .accepted)
        #expect(actions.filter { if case .sendChunk = $0 { true } else { false } }.count == ResourceLimits.window)
        #expect(sender.chunksInFlight == ResourceLimits.window)
        var ack = ResourceAckPayload()
        ack.next = 1
        #expect(sender.receivedAck(ack, now: now).contains(.sendChunk(ResourceLimits.window)))
    }

    @Test("a lost chunk is sent again after the retransmission timeout, and only that one")
    func lostChunkIsRetransmitted() {
        var pair = Pair(content: content(10 * 1_024))
        pair.loseOnce = [3]
        pair.start()
        #expect(!pair.receiverCompleted)
        #expect(pair.receiver?.next == 3)
        let before = pair.senderResults.count
        pair.advance(ResourceLimits.initialRetransmissionTimeout)
        let resent = pair.senderResults[before...].filter { if case .sendChunk = $0 { true } else { false } }
        #expect(resent == [.sendChunk(3)])
        #expect(pair.senderCompleted)
        #expect(pair.receiverCompleted)
    }

    @Test("a transfer paused while the receiver is out of reach counts no tries, and resumes from the receiver's acknowledgement when it is back")
    func pausedAndResumed() {
        var pair = Pair(content: content(20 * 1_024))
        pair.loseOnce = Set(3..<12)
        pair.start()
        #expect(pair.receiver?.next == 3)
        #expect(pair.sender.peerUnreachable(now: pair.now) == [.paused])
        #expect(pair.sender.peerUnreachable(now: pair.now).isEmpty)   // said once
        #expect(pair.receiver?.senderUnreachable(now: pair.now) == [.paused])
        // Five minutes out of reach: no retransmission, no failure, on either side.
        let before = pair.senderResults.count
        pair.advance(.seconds(300))
        #expect(pair.senderResults.count == before)
        #expect(pair.receiver?.timerFired(now: pair.now).isEmpty == true)
        #expect(pair.sender.state == .sending)
        // Back: what was in flight goes again, and the transfer completes.
        #expect(pair.receiver?.senderReachable(now: pair.now).first == .resumed, "resumed, with an acknowledgement of what is stored")
        pair.runSender(pair.sender.peerReachable(now: pair.now))
        #expect(pair.senderResults[before] == .resumed)
        #expect(pair.senderResults[before...].contains(.sendChunk(3)))
        #expect(pair.senderCompleted)
        #expect(pair.receiverCompleted)
        #expect(pair.sender.pausedSince == nil)
    }

    @Test("back from a pause, a sender probes with the offer and sends only what the receiver's answer says it lacks: chunks that arrived before the link went are not sent twice")
    func resumeProbesBeforeResending() {
        let offer = ResourceOffer(name: "a", size: 40 * 1_024, sha256: Data(count: 32), chunkSize: 1_024)
        var sender = ResourceSendStateMachine(id: .random(), offer: offer)
        var receiver = ResourceReceiveStateMachine(id: sender.id, offer: offer, incarnation: 7, now: .now)
        let start = ContinuousClock.now
        _ = sender.start(now: start)
        guard case .sendAck(let accepted)? = receiver.accept().first else { Issue.record("no acceptance"); return }
        let first = sender.receivedAck(accepted, now: start)
        let sentFirst = first.compactMap { if case .sendChunk(let index) = $0 { index } else { nil } }
        #expect(sentFirst == Array(0..<ResourceLimits.window))
        // Every chunk in flight arrives, but each acknowledgement is lost with the link.
        for index in sentFirst { _ = receiver.receivedChunk(index: index, length: 1_024, now: start) }
        _ = sender.peerUnreachable(now: start)
        let back = sender.peerReachable(now: start + .seconds(5))
        #expect(back == [.resumed, .sendOffer(offer.payload)], "nothing is resent before the receiver says what it holds")
        #expect(sender.isProbing && sender.chunksInFlight == 0)
        #expect(sender.linkHasRoom(now: start + .seconds(5)).isEmpty, "no chunk while probing")
        // The probe is retransmitted on timeout, as the offer is.
        #expect(sender.nextDeadline == start + .seconds(5) + sender.retransmissionTimeout)
        #expect(sender.timerFired(now: start + .seconds(5) + sender.retransmissionTimeout) == [.sendOffer(offer.payload)])
        guard case .sendAck(let held)? = receiver.receivedOfferAgain().first else { Issue.record("no answer to the probe"); return }
        let after = sender.receivedAck(held, now: start + .seconds(9))
        let resent = after.compactMap { if case .sendChunk(let index) = $0 { index } else { nil } }
        #expect(!sender.isProbing)
        #expect(resent.first == ResourceLimits.window, "goes on past what the receiver holds")
        #expect(sender.chunksSent == 2 * ResourceLimits.window, "each chunk sent once")
    }

    @Test("to a neighbour a sender keeps a sixteenth of the resource in flight, from 16 to the receiver's 256 chunks (§16.4, version 8); a sender's window never passes the receiver's")
    func directWindowSizing() {
        func window(_ size: UInt64) -> Int { ResourceLimits.directWindow(for: ResourceOffer(name: "a", size: size, sha256: Data(count: 32))) }
        #expect(window(0) == ResourceLimits.window && window(1 << 20) == ResourceLimits.window)
        #expect(window(24 << 20) == 26, "24 MiB: 1.5 MiB in flight")
        #expect(window(256 << 20) == ResourceLimits.receiveWindow && window(ResourceLimits.maxSize) == ResourceLimits.receiveWindow)
        var sender = ResourceSendStateMachine(id: .random(), offer: ResourceOffer(name: "a", size: 1 << 30, sha256: Data(count: 32)))
        sender.window = 10_000
        #expect(sender.window == ResourceLimits.receiveWindow)
        sender.window = 0
        #expect(sender.window == 1)
    }

    @Test("with a wide window, a receiver restarted from its record and a link lost with its window in flight cost at most what was in flight")
    func wideWindowResumeCost() {
        var pair = Pair(content: content(400 * 1_024))
        pair.sender.window = 64
        pair.loseOnce = Set(100..<164)   // the window in flight when the link goes
        pair.start()
        #expect(pair.receiver?.next == 100)
        #expect(pair.maxInFlight <= 64)
        _ = pair.sender.peerUnreachable(now: pair.now)
        _ = pair.receiver?.senderUnreachable(now: pair.now)
        pair.advance(.seconds(30))
        // The receiver restarts from a record of everything it holds (a session that stops records it).
        var restored = ResourceReceiveStateMachine(restoring: pair.sender.id, offer: pair.sender.offer, next: pair.receiver!.next,
                                                   stored: Set(pair.receiver!.storedAhead), incarnation: 99, now: pair.now)
        _ = restored.resume()
        pair.receiver = restored
        pair.runSender(pair.sender.peerReachable(now: pair.now))
        #expect(pair.senderResults.contains(.rewound(100)))
        #expect(pair.senderCompleted && pair.receiverCompleted)
        #expect(pair.sender.chunksSent <= 400 + 64, "sent \(pair.sender.chunksSent) chunks for 400")
    }

    @Test("a paused offer is sent again when the receiver is back; a transfer out of reach for the limit fails with timedOut")
    func pausedOfferAndLimit() {
        var sender = ResourceSendStateMachine(id: .random(), offer: ResourceOffer(name: "a", size: 10, sha256: Data(count: 32)))
        let start = ContinuousClock.now
        _ = sender.start(now: start)
        _ = sender.peerUnreachable(now: start)
        #expect(sender.timerFired(now: start + .seconds(599)).isEmpty)
        #expect(sender.peerReachable(now: start + .seconds(599)) == [.resumed, .sendOffer(sender.offer.payload)])
        #expect(sender.peerReachable(now: start + .seconds(600)).isEmpty)   // not paused: a route change only
        _ = sender.peerUnreachable(now: start + .seconds(600))
        let actions = sender.timerFired(now: start + .seconds(600) + ResourceLimits.unreachableTimeout)
        guard case .failed(let failure) = actions.last else { Issue.record("\(actions)"); return }
        #expect(failure.code == .timedOut)

        var receiver = ResourceReceiveStateMachine(id: .random(), offer: ResourceOffer(name: "a", size: 5_000, sha256: Data(count: 32), chunkSize: 1_024), incarnation: 1, now: start)
        _ = receiver.accept()
        _ = receiver.senderUnreachable(now: start)
        #expect(receiver.timerFired(now: start + .seconds(300)).isEmpty)
        _ = receiver.senderReachable(now: start + .seconds(300))
        #expect(receiver.timerFired(now: start + .seconds(359)).isEmpty)
        guard case .failed(let idle)? = receiver.timerFired(now: start + .seconds(360)).last else { Issue.record("no idle timeout"); return }
        #expect(idle.code == .timedOut)
    }

    @Test("route lost while the file was hashed: the offer starts paused, counts no tries for 9 minutes (8 tries took about a minute before), and goes out when the receiver is back; the transfer completes")
    func offerStartsPausedWhenUnreachable() {
        var pair = Pair(content: content(5 * 1_024))
        let actions = pair.sender.start(now: pair.now, reachable: false)
        #expect(actions == [.paused])
        #expect(pair.sender.pausedSince == pair.now)
        #expect(pair.sender.start(now: pair.now).first == .ignored("the transfer has already started"))
        for _ in 0..<54 { pair.advance(.seconds(10)) }
        #expect(pair.senderResults.isEmpty)
        #expect(pair.sender.state == .offered)
        pair.runSender(pair.sender.peerReachable(now: pair.now))
        #expect(pair.senderResults.first == .resumed)
        #expect(pair.senderCompleted)
        #expect(pair.receiverCompleted)
    }

    @Test("route lost after the offer went out: paused at once, no retries counted for 9 minutes, resumed with a fresh offer; lost again for the limit it fails")
    func offerPausedAfterItWentOut() {
        var pair = Pair(content: content(5 * 1_024))
        pair.loseOffers = 1
        pair.start()
        #expect(pair.receiver == nil)
        #expect(pair.sender.peerUnreachable(now: pair.now) == [.paused])
        for _ in 0..<54 { pair.advance(.seconds(10)) }
        #expect(!pair.senderResults.contains { if case .failed = $0 { true } else { false } })
        #expect(pair.senderResults.filter { if case .sendOffer = $0 { true } else { false } }.count == 1)
        pair.runSender(pair.sender.peerReachable(now: pair.now))
        #expect(pair.senderCompleted)

        var lost = ResourceSendStateMachine(id: .random(), offer: ResourceOffer(name: "a", size: 10, sha256: Data(count: 32)))
        let start = ContinuousClock.now
        #expect(lost.start(now: start, reachable: false) == [.paused])
        #expect(lost.timerFired(now: start + ResourceLimits.unreachableTimeout - .seconds(1)).isEmpty)
        guard case .failed(let failure)? = lost.timerFired(now: start + ResourceLimits.unreachableTimeout).last else {
            Issue.record("no failure after the limit"); return
        }
        #expect(failure.code == .timedOut)
    }

    @Test("a receiver paused by a lost route resumes when a chunk arrives even before the route is reported back")
    func receiverResumesOnChunk() {
        let offer = ResourceOffer(name: "a", size: 4 * 1_024, sha256: Data(count: 32), chunkSize: 1_024)
        var receiver = ResourceReceiveStateMachine(id: .random(), offer: offer, incarnation: 1, now: .now)
        _ = receiver.accept()
        #expect(receiver.senderUnreachable(now: .now) == [.paused])
        #expect(receiver.receivedChunk(index: 0, length: 1_024, now: .now).first == .resumed)
        #expect(receiver.senderReachable(now: .now).isEmpty)
    }

    @Test("chunks in order are acknowledged every second one and at the last; a duplicate and a chunk after a gap at once")
    func inOrderAcknowledgementsEverySecondChunk() {
        let offer = ResourceOffer(name: "a", size: 5 * 1_024, sha256: Data(count: 32), chunkSize: 1_024)
        var receiver = ResourceReceiveStateMachine(id: .random(), offer: offer, incarnation: 1, now: .now)
        _ = receiver.accept()
        func acknowledged(_ actions: [ResourceReceiveStateMachine.Action]) -> UInt32? {
            for case .sendAck(let ack) in actions { return ack.next }
            return nil
        }
        let zero = receiver.receivedChunk(index: 0, length: 1_024, now: .now)
        #expect(zero.contains(.write(index: 0)) && acknowledged(zero) == nil)
        #expect(acknowledged(receiver.receivedChunk(index: 1, length: 1_024, now: .now)) == 2)
        #expect(acknowledged(receiver.receivedChunk(index: 1, length: 1_024, now: .now)) == 2)   // a duplicate
        #expect(acknowledged(receiver.receivedChunk(index: 3, length: 1_024, now: .now)) == 2)   // after a gap
        #expect(acknowledged(receiver.receivedChunk(index: 2, length: 1_024, now: .now)) == 4)   // fills it
        let last = receiver.receivedChunk(index: 4, length: 1_024, now: .now)
        #expect(acknowledged(last) == 5 && last.contains(.verify))
    }

    @Test("chunks out of order are stored and acknowledged selectively; a duplicate is acknowledged again, not written again")
    func outOfOrderAndDuplicates() {
        let offer = ResourceOffer(name: "a", size: 4 * 1_024, sha256: Data(count: 32), chunkSize: 1_024)
        var receiver = ResourceReceiveStateMachine(id: .random(), offer: offer, incarnation: 1, now: .now)
        _ = receiver.accept()
        let two = receiver.receivedChunk(index: 2, length: 1_024, now: .now)
        #expect(two.contains(.write(index: 2)))
        var expected = ResourceAckPayload()
        expected.next = 0
        expected.received = [2]
        expected.incarnation = 1
        #expect(two.contains(.sendAck(expected)))
        let again = receiver.receivedChunk(index: 2, length: 1_024, now: .now)
        #expect(again == [.sendAck(expected)])
        _ = receiver.receivedChunk(index: 0, length: 1_024, now: .now)
        let one = receiver.receivedChunk(index: 1, length: 1_024, now: .now)
        expected.next = 3
        expected.received = []
        #expect(one.contains(.sendAck(expected)))
        #expect(receiver.next == 3)
        #expect(receiver.bytesStored == 3 * 1_024)
    }

    @Test("a chunk past the window is not stored but answered with an acknowledgement of what is (§16.4.2: a sender that missed a restart learns it)")
    func chunkPastWindow() {
        let offer = ResourceOffer(name: "a", size: 1_000 * 1_024, sha256: Data(count: 32), chunkSize: 1_024)
        var receiver = ResourceReceiveStateMachine(id: .random(), offer: offer, incarnation: 1, now: .now)
        _ = receiver.accept()
        #expect(receiver.window == ResourceLimits.receiveWindow)
        let actions = receiver.receivedChunk(index: receiver.window, length: 1_024, now: .now)
        var expected = ResourceAckPayload()
        expected.incarnation = 1
        #expect(actions == [.sendAck(expected)])
        #expect(receiver.state == .receiving && receiver.bytesStored == 0)
    }

    @Test("a chunk out of range or of the wrong length cancels the transfer with protocolViolation")
    func chunkOutOfRange() {
        let offer = ResourceOffer(name: "a", size: 2_500, sha256: Data(count: 32), chunkSize: 1_024)
        var receiver = ResourceReceiveStateMachine(id: .random(), offer: offer, incarnation: 1, now: .now)
        _ = receiver.accept()
        let actions = receiver.receivedChunk(index: 3, length: 1_024, now: .now)
        #expect(actions.count == 2)
        guard case .sendCancel(.protocolViolation, let reason) = actions.first else { Issue.record("\(actions)"); return }
        #expect(reason.contains("out of range"))
        #expect(receiver.state == .finished)
        #expect(receiver.receivedChunk(index: 0, length: 1_024, now: .now).count == 1)

        var second = ResourceReceiveStateMachine(id: .random(), offer: offer, incarnation: 1, now: .now)
        _ = second.accept()
        let short = second.receivedChunk(index: 2, length: 1_024, now: .now)   // the last chunk has 452 bytes
        guard case .sendCancel(.protocolViolation, let why) = short.first else { Issue.record("\(short)"); return }
        #expect(why.contains("452"))
    }

    @Test("content whose SHA-256 differs from the offer's fails both sides with hashMismatch")
    func hashMismatch() {
        var pair = Pair(content: content(5_000), hash: Data(repeating: 7, count: 32))
        pair.start()
        #expect(!pair.receiverCompleted)
        #expect(pair.receiverResults.contains(.sendCancel(.hashMismatch, "the received content's SHA-256 differs from the offer's")))
        #expect(pair.senderResults.contains { if case .failed(let failure) = $0 { failure.code == .hashMismatch && failure.byPeer } else { false } })
        #expect(pair.receiver?.state == .finished)
    }

    @Test("offers breaking a limit are refused with the right code and a reason naming the limit")
    func offerLimits() {
        func refusal(_ change: (inout ResourceOfferPayload) -> Void) -> ResourceFailure? {
            var payload = ResourceOffer(name: "ok.txt", size: 10, sha256: Data(count: 32)).payload
            change(&payload)
            do {
                _ = try ResourceOffer(validating: payload)
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal { _ in } == nil)
        let big = refusal { $0.size = ResourceLimits.maxSize + 1 }
        #expect(big?.code == .tooLarge)
        #expect(big?.reason.contains("17179869184") == true)
        #expect(refusal { $0.size = ResourceLimits.maxSize } == nil)
        #expect(refusal { $0.name = "" }?.code == .invalidOffer)
        #expect(refusal { $0.name = String(repeating: "a", count: 256) }?.code == .invalidOffer)
        #expect(refusal { $0.sha256 = Data(count: 31) }?.code == .invalidOffer)
        #expect(refusal { $0.chunkSize = 1_023 }?.code == .invalidOffer)
        #expect(refusal { $0.chunkSize = 60_001 }?.code == .invalidOffer)
    }

    @Test("a chunk of the sender's size fits a channel message, and sealed with its framing, the sealed plaintext limit")
    func chunkFitsSealedLimit() {
        var message = ResourceMessagePayload()
        message.transferID = Data(count: 16)
        var chunk = ResourceChunkPayload()
        chunk.index = UInt32.max
        chunk.data = Data(count: ResourceLimits.chunkSize)
        message.chunk = chunk
        var channel = ChannelMessagePayload()
        channel.channel = ChannelID.resources.rawValue
        channel.payload = message.serialized
        var sealed = SealedPayload()
        sealed.identityKey = Data(count: 32)
        sealed.staticSignature = Data(count: 64)
        sealed.displayName = String(repeating: "n", count: 63)
        sealed.sealedAtMs = Int64.max
        sealed.channel = channel
        #expect(message.serialized.count <= Session.maxChannelPayload)
        #expect(sealed.serialized.count <= WireLimits.maxSealedPlaintext)
    }

    @Test("an unanswered offer is sent maxTransmissions times, then the transfer fails with timedOut")
    func offerTimesOut() {
        var sender = ResourceSendStateMachine(id: .random(), offer: ResourceOffer(name: "a", size: 10, sha256: Data(count: 32)))
        var now = ContinuousClock.now
        var offers = sender.start(now: now).count
        var failure: ResourceFailure?
        for _ in 0..<100 where failure == nil {
            now += ResourceLimits.maxRetransmissionTimeout
            for action in sender.timerFired(now: now) {
                if case .sendOffer = action { offers += 1 }
                if case .failed(let why) = action { failure = why }
            }
        }
        #expect(offers == ResourceLimits.maxTransmissions)
        #expect(failure?.code == .timedOut)
        #expect(sender.state == .finished)
        #expect(sender.nextDeadline == nil)
    }

    @Test("a lost confirmation: the sender probes with the last chunk and the receiver's answer completes it")
    func lostConfirmationIsProbed() {
        let data = content(3_000)
        let offer = ResourceOffer(name: "a", size: 3_000, sha256: Data(SHA256.hash(data: data)), chunkSize: 1_024)
        var sender = ResourceSendStateMachine(id: .random(), offer: offer)
        var now = ContinuousClock.now
        _ = sender.start(now: now)
        _ = sender.receivedAck(ResourceAckPayload(), now: now)
        var ack = ResourceAckPayload()
        ack.next = 3
        _ = sender.receivedAck(ack, now: now)
        #expect(sender.state == .confirming)
        now += ResourceLimits.maxRetransmissionTimeout
        #expect(sender.timerFired(now: now) == [.sendChunk(2)])
        var done = ResourceDonePayload()
        done.sha256 = offer.sha256
        #expect(sender.receivedDone(done) == [.progress(3_000), .completed])
    }

    @Test("a receiver that hears nothing for the idle timeout gives up with timedOut")
    func receiverIdleTimeout() {
        let start = ContinuousClock.now
        var receiver = ResourceReceiveStateMachine(id: .random(), offer: ResourceOffer(name: "a", size: 5_000, sha256: Data(count: 32), chunkSize: 1_024), incarnation: 1, now: start)
        _ = receiver.accept()
        #expect(receiver.timerFired(now: start + .seconds(59)).isEmpty)
        let actions = receiver.timerFired(now: start + ResourceLimits.receiveIdleTimeout)
        guard case .sendCancel(.timedOut, _) = actions.first, case .failed(let failure) = actions.last else { Issue.record("\(actions)"); return }
        #expect(failure.code == .timedOut)
    }

    @Test("an empty file completes with no chunks")
    func emptyFile() {
        var pair = Pair(content: Data())
        pair.start()
        #expect(pair.senderCompleted)
        #expect(pair.receiverCompleted)
        #expect(pair.stored.isEmpty)
    }

    @Test("a cancel from the receiver ends the sender with the receiver's reason")
    func refusedOffer() {
        var sender = ResourceSendStateMachine(id: .random(), offer: ResourceOffer(name: "a", size: 10, sha256: Data(count: 32)))
        _ = sender.start(now: .now)
        var cancel = ResourceCancelPayload()
        cancel.code = ResourceCancelCode.refused.rawValue
        cancel.reason = "the receiver does not take files from you"
        let actions = sender.receivedCancel(cancel)
        #expect(actions == [.failed(ResourceFailure(.refused, "the receiver does not take files from you", byPeer: true))])
        #expect(sender.receivedAck(ResourceAckPayload(), now: .now).count == 1)
    }

    @Test("an acknowledgement past the last chunk is a protocol violation")
    func ackPastEnd() {
        var sender = ResourceSendStateMachine(id: .random(), offer: ResourceOffer(name: "a", size: 2_048, sha256: Data(count: 32), chunkSize: 1_024))
        _ = sender.start(now: .now)
        var ack = ResourceAckPayload()
        ack.next = 5
        let actions = sender.receivedAck(ack, now: .now)
        #expect(actions.contains { if case .sendCancel(.protocolViolation, _) = $0 { true } else { false } })
        #expect(sender.state == .finished)
    }
}

@Suite("Received file names (PROTOCOL.md §16.6)")
struct FileNamesTests {
    @Test("sanitised", arguments: [
        ("report.pdf", "report.pdf"),
        ("../../etc/passwd", "passwd"),
        ("..", FileNames.fallback),
        ("/", FileNames.fallback),
        ("", FileNames.fallback),
        ("C:\\Users\\me\\notes.txt", "notes.txt"),
        (".bashrc", "bashrc"),
        ("a\nb\u{1B}[31mc.txt", "ab[31mc.txt"),
        ("evil\u{202E}txt.exe", "eviltxt.exe"),
        ("  spaced name.txt  ", "spaced name.txt"),
    ])
    func sanitised(_ input: String, _ expected: String) {
        #expect(FileNames.sanitised(input) == expected)
    }

    @Test("a long name is cut to the byte limit on a character boundary, keeping its extension")
    func longName() {
        let name = FileNames.sanitised(String(repeating: "é", count: 300) + ".jpeg")
        #expect(name.utf8.count <= FileTransferLimits.maxStoredNameBytes)
        #expect(name.hasSuffix(".jpeg"))
        #expect(name.hasPrefix("éé"))
    }

    @Test("an existing name gets a number before its extension, never overwriting")
    func unique() {
        let taken: Set<String> = ["photo.jpg", "photo (1).jpg", "notes"]
        #expect(FileNames.unique("photo.jpg") { taken.contains($0) } == "photo (2).jpg")
        #expect(FileNames.unique("notes") { taken.contains($0) } == "notes (1)")
        #expect(FileNames.unique("new.txt") { taken.contains($0) } == "new.txt")
    }
}
