import Crypto
import Foundation
@testable import MeshLink
import MeshNoise
import MeshWire
import NIOCore
import Testing

/// Cipher suite negotiation (PROTOCOL.md §4.11): every combination of offers, the RETRY path,
/// and downgrade attempts by a party in the middle that rewrites the offer or forges a RETRY.
@Suite("Cipher suite negotiation")
struct SuiteNegotiationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var initiator: [CipherSuite]
        var responder: [CipherSuite]
        var expected: CipherSuite
        var retries: Int
        var testDescription: String { "\(initiator) → \(responder): \(expected), \(retries) RETRY" }
    }

    static let withAES: [CipherSuite] = [.aesGCM, .chaChaPoly]
    static let withoutAES: [CipherSuite] = [.chaChaPoly]

    @Test("both ends agree on the suite the offers select, with one RETRY when the initiator guessed wrong", arguments: [
        Case(initiator: withAES, responder: withAES, expected: .aesGCM, retries: 0),
        Case(initiator: withAES, responder: withoutAES, expected: .chaChaPoly, retries: 1),
        Case(initiator: withoutAES, responder: withAES, expected: .chaChaPoly, retries: 0),
        Case(initiator: withoutAES, responder: withoutAES, expected: .chaChaPoly, retries: 0),
        Case(initiator: [.chaChaPoly, .aesGCM], responder: withAES, expected: .chaChaPoly, retries: 0),
        Case(initiator: [.aesGCM], responder: [.aesGCM], expected: .aesGCM, retries: 0),  // ChaChaPoly is added
    ])
    func combinations(_ test: Case) throws {
        var pump = try machinePump(try randomConfiguration("i", suites: test.initiator), try randomConfiguration("r", suites: test.responder))
        pump.run()
        let initiator = try #require(pump.initiatorOutcome.link, "\(String(describing: pump.initiatorOutcome.reason))")
        let responder = try #require(pump.responderOutcome.link, "\(String(describing: pump.responderOutcome.reason))")
        #expect(initiator.suite == test.expected && responder.suite == test.expected)
        #expect(initiator.datagramKeys.cipher == test.expected.cipher)
        #expect(pump.frames(.retry).count == test.retries)
        #expect(pump.frames(.handshake).count == 3 + test.retries)
        try Self.expectTraffic(initiator, responder)
    }

    @Test("with the responder's offer learnt from its TXT record (§12.2), message 1 uses the selected suite: no RETRY", arguments: [
        Case(initiator: withAES, responder: withoutAES, expected: .chaChaPoly, retries: 0),
        Case(initiator: withAES, responder: withAES, expected: .aesGCM, retries: 0),
        Case(initiator: withoutAES, responder: withAES, expected: .chaChaPoly, retries: 0),
    ])
    func learntOffer(_ test: Case) throws {
        var initiator = try randomConfiguration("i", suites: test.initiator)
        initiator.peerSuites = test.responder
        var pump = try machinePump(initiator, try randomConfiguration("r", suites: test.responder))
        pump.run()
        let link = try #require(pump.initiatorOutcome.link, "\(String(describing: pump.initiatorOutcome.reason))")
        #expect(link.suite == test.expected && pump.responderOutcome.link?.suite == test.expected)
        #expect(pump.frames(.retry).count == test.retries)
        #expect(pump.frames(.handshake).count == 3)
    }

    @Test("a forged TXT offer (ChaChaPoly only, for two AES ends) costs one RETRY and the link still runs AESGCM")
    func forgedLearntOffer() throws {
        var initiator = try randomConfiguration("i", suites: Self.withAES)
        initiator.peerSuites = Self.withoutAES
        var pump = try machinePump(initiator, try randomConfiguration("r", suites: Self.withAES))
        pump.run()
        let link = try #require(pump.initiatorOutcome.link, "\(String(describing: pump.initiatorOutcome.reason))")
        #expect(link.suite == .aesGCM && pump.responderOutcome.link?.suite == .aesGCM)
        #expect(pump.frames(.retry).count == 1)
    }

    @Test("a link's records and datagrams go both ways under its suite, and not under the other")
    func trafficUsesTheSuite() throws {
        var pump = try machinePump(try randomConfiguration("i", suites: Self.withAES), try randomConfiguration("r", suites: Self.withAES))
        pump.run()
        var initiator = try #require(pump.initiatorOutcome.link)
        var buffer = ByteBuffer()
        try initiator.channel.seal(Data("sealed with AES-GCM".utf8), into: &buffer)
        let frame = parseOne(Array(buffer.readableBytesView))
        // The same key as ChaChaPoly does not open it.
        let keys = initiator.datagramKeys
        let chacha = DatagramKeys(sendKey: keys.sendKey, receiveKey: keys.sendKey, sendTag: keys.sendTag, receiveTag: keys.sendTag)
        let aes = DatagramKeys(sendKey: keys.sendKey, receiveKey: keys.sendKey, sendTag: keys.sendTag, receiveTag: keys.sendTag, cipher: .aesGCM)
        var datagram = ByteBuffer()
        var sealer = DatagramSealer(keys: aes)
        try sealer.seal(Data("datagram".utf8), into: &datagram)
        var header = datagram
        let decoded = try DatagramHeader(decoding: &header)
        var wrong = DatagramOpener(keys: chacha)
        #expect(throws: DatagramOpener.Drop.unauthenticated) { try wrong.open(header: decoded, box: header) }
        var right = DatagramOpener(keys: aes)
        #expect(try right.open(header: decoded, box: header) == Data("datagram".utf8))
        var responder = try #require(pump.responderOutcome.link)
        #expect(try responder.channel.open(frame) == Data("sealed with AES-GCM".utf8))
    }

    // MARK: Downgrade attempts

    @Test("a party in the middle that strips AESGCM from the hello's offer fails message 2: nothing is established")
    func rewrittenOffer() throws {
        var pump = try machinePump(try randomConfiguration("i", suites: Self.withAES), try randomConfiguration("r", suites: Self.withAES))
        pump.tamper = { index, bytes in
            guard index == 0 else { return }
            bytes = Self.rewritingHello(bytes) { hello in
                hello.suites = [1]
                hello.suite = 1
            }
        }
        pump.run()
        #expect(pump.initiatorOutcome.link == nil && pump.responderOutcome.link == nil)
        let reason = try #require(pump.initiatorOutcome.reason)
        #expect(reason.code == .handshakeFailed && !reason.isRemote)
        #expect(pump.responderOutcome.reason?.code == .handshakeFailed, "the initiator's ABORT tells the responder")
    }

    @Test("a forged RETRY to ChaChaPoly between two AES ends is refused with suiteDowngrade: the responder never sent it")
    func forgedRetry() throws {
        let responder = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r", suites: Self.withAES))
        var pump = Pump(
            try HandshakeStateMachine(role: .initiator, configuration: try randomConfiguration("i", suites: Self.withAES)),
            ForgingRetry(inner: responder, suite: .chaChaPoly))
        pump.run()
        #expect(pump.initiatorOutcome.link == nil && pump.responderOutcome.link == nil)
        let reason = try #require(pump.responderOutcome.reason)
        #expect(reason.code == .suiteDowngrade && !reason.isRemote)
        #expect(reason.message.contains("never sent"))
        #expect(pump.initiatorOutcome.reason?.code == .suiteDowngrade && pump.initiatorOutcome.reason?.isRemote == true)
    }

    @Test("a forged RETRY whose retried hello is also rewritten (retry_of cleared) ends in suiteDowngrade at the initiator")
    func forgedRetryHidden() throws {
        let responder = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r", suites: Self.withAES))
        var pump = Pump(
            try HandshakeStateMachine(role: .initiator, configuration: try randomConfiguration("i", suites: Self.withAES)),
            ForgingRetry(inner: responder, suite: .chaChaPoly))
        pump.tamper = { index, bytes in
            guard index == 2 else { return }  // message 1 written again
            bytes = Self.rewritingHello(bytes) { $0.retryOf = 0 }
        }
        pump.run()
        #expect(pump.initiatorOutcome.link == nil && pump.responderOutcome.link == nil)
        let reason = try #require(pump.initiatorOutcome.reason)
        #expect(reason.code == .suiteDowngrade && !reason.isRemote)
        #expect(reason.message.contains("second RETRY"))
    }

    @Test("a genuine RETRY is bound into the prologue: replaying the retried message 1 to a fresh responder fails message 2")
    func retryBoundInPrologue() throws {
        var pump = try machinePump(try randomConfiguration("i", suites: Self.withAES), try randomConfiguration("r", suites: Self.withoutAES))
        pump.run()
        #expect(pump.initiatorOutcome.link?.suite == .chaChaPoly)
        // The retried message 1 (transcript index 2) says retry_of = AESGCM; a responder that
        // sent no RETRY refuses it with suiteDowngrade.
        var fresh = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r2", suites: Self.withoutAES))
        guard case .abort(let reason, _) = fresh.receivedFrame(parseOne(pump.transcript[2].bytes)) else {
            Issue.record("a responder accepted a retried message 1 it never asked for")
            return
        }
        #expect(reason.code == .suiteDowngrade)
    }

    @Test("RETRY frames out of place: to the responder, naming an unknown or unoffered suite, or the suite in use")
    func retryOutOfPlace() throws {
        var responder = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r", suites: Self.withAES))
        guard case .abort(let reason, _) = responder.receivedFrame(.retry(suite: 1)) else { Issue.record("accepted"); return }
        #expect(reason.code == .protocolViolation)

        for (offer, suite, code) in [(Self.withAES, UInt8(9), CloseCode.suiteDowngrade), (Self.withoutAES, 2, .suiteDowngrade),
                                     (Self.withAES, 2, .suiteDowngrade)] {
            var initiator = try HandshakeStateMachine(role: .initiator, configuration: try randomConfiguration("i", suites: offer))
            _ = initiator.start()
            guard case .abort(let reason, let frame) = initiator.receivedFrame(.retry(suite: suite)) else {
                Issue.record("RETRY \(suite) accepted with offer \(offer)")
                continue
            }
            #expect(reason.code == code, "RETRY \(suite) with offer \(offer)")
            #expect(frame?.type == .abort)
        }
        var initiator = try HandshakeStateMachine(role: .initiator, configuration: try randomConfiguration("i", suites: Self.withAES))
        _ = initiator.start()
        let malformed = Frame(type: .retry, body: ByteBuffer(bytes: [1, 2]))
        guard case .abort(let reason, _) = initiator.receivedFrame(malformed) else { Issue.record("accepted"); return }
        #expect(reason.code == .protocolViolation)
    }

    // MARK: The hello's offer is bounded and checked

    @Test("offers: at most 8 ids, no repeats, ChaChaPoly required; unknown ids skipped")
    func offerDecoding() throws {
        #expect(try CipherSuite.offer(decoding: [2, 1]) == [.aesGCM, .chaChaPoly])
        #expect(try CipherSuite.offer(decoding: [7, 1, 300, UInt32.max]) == [.chaChaPoly])
        #expect(try CipherSuite.offer(decoding: [1, 3, 4, 5, 6, 7, 8, 9]).count == 1)
        for bad: [UInt32] in [[1, 3, 4, 5, 6, 7, 8, 9, 10], [1, 1], [2, 1, 2], [2], [], [7]] {
            #expect(throws: LinkCloseReason.self, "\(bad)") { try CipherSuite.offer(decoding: bad) }
        }
        #expect(CipherSuite.normalizedOffer([.aesGCM, .aesGCM]) == [.aesGCM, .chaChaPoly])
        #expect(CipherSuite.select(initiator: [.aesGCM, .chaChaPoly], responder: [.chaChaPoly, .aesGCM]) == .aesGCM)
    }

    @Test("a responder refuses a hello whose offer is malformed with protocolViolation, and accepts unknown ids", arguments: [
        ([UInt32](repeating: 1, count: 9), UInt32(1), false),
        ([1, 1], 1, false),
        ([2], 2, false),
        ([1], 2, false),  // message 1 written with a suite not offered
        ([1], 0, false),
        ([42, 1], 1, true),
    ])
    func helloChecks(suites: [UInt32], suite: UInt32, accepted: Bool) throws {
        var hello = HelloPayload()
        hello.protocolVersion = HandshakeStateMachine.protocolVersion
        hello.serviceType = "meshchat"
        hello.suites = suites
        hello.suite = suite
        let fake = try FakeNoisePeer(initiator: true, hello: hello.encoded, identity: Data())
        var pump = Pump(fake, try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r", suites: Self.withAES)))
        pump.run()
        if accepted {
            #expect(pump.frames(.handshake).count >= 2, "the responder answered with message 2")
        } else {
            #expect(pump.responderOutcome.reason?.code == .protocolViolation)
            #expect(pump.frames(.handshake).count == 1)
        }
    }

    @Test("a version 3 hello (no suites) gets unsupportedVersion, not a suite error, so the user is told why")
    func versionThreeHello() throws {
        let fake = try FakeNoisePeer(initiator: true, hello: helloPayload(version: 3, serviceType: "meshchat", suites: []), identity: Data())
        var pump = Pump(fake, try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r", suites: Self.withAES)))
        pump.run()
        let reason = try #require(pump.responderOutcome.reason)
        #expect(reason.code == .unsupportedVersion)
        #expect(reason.message == "peer speaks protocol version 3; this peer speaks 8")
    }

    @Test("a version 5, 6 or 7 hello (5: the HMAC ratchet; 6: no direct channel messages; 7: resource windows of 16 chunks) gets unsupportedVersion naming both versions, with either suite",
          arguments: [UInt32(5), 6, 7], [CipherSuite.chaChaPoly, .aesGCM])
    func olderVersionHello(version: UInt32, suite: CipherSuite) throws {
        let hello = helloPayload(version: version, serviceType: "meshchat", suites: [suite])
        let fake = try FakeNoisePeer(initiator: true, hello: hello, identity: Data())
        var pump = Pump(fake, try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r", suites: Self.withAES)))
        pump.run()
        let reason = try #require(pump.responderOutcome.reason)
        #expect(reason.code == .unsupportedVersion)
        #expect(reason.message == "peer speaks protocol version \(version); this peer speaks 8")
    }

    // MARK: Helpers

    /// Sends one message each way over the established pair.
    static func expectTraffic(_ initiator: EstablishedLink, _ responder: EstablishedLink) throws {
        var (a, b) = (initiator, responder)
        for (from, to, text) in [(0, 1, "ping"), (1, 0, "pong")] {
            var buffer = ByteBuffer()
            if from == 0 { try a.channel.seal(Data(text.utf8), into: &buffer) } else { try b.channel.seal(Data(text.utf8), into: &buffer) }
            let frame = parseOne(Array(buffer.readableBytesView))
            let opened = to == 1 ? try b.channel.open(frame) : try a.channel.open(frame)
            #expect(opened == Data(text.utf8))
        }
    }

    /// Re-encodes the hello of a message 1 frame (5-byte header, 32-byte `e`, hello).
    static func rewritingHello(_ bytes: [UInt8], _ change: (inout HelloPayload) -> Void) -> [UInt8] {
        guard bytes.count > 37, var hello = try? HelloPayload(decoding: Data(bytes[37...])) else { return bytes }
        change(&hello)
        let body = Array(bytes[5..<37]) + Array(hello.encoded)
        return frameBytes(Frame(type: .handshake, body: ByteBuffer(bytes: body)))
    }
}

/// A party in the middle in front of a real responder: it answers the first message 1 itself with
/// a RETRY naming `suite` (the responder never sees that message 1), then relays everything.
struct ForgingRetry: HandshakeParty {
    var inner: HandshakeStateMachine
    var suite: CipherSuite
    var forged = false

    mutating func start() -> HandshakeStateMachine.Action { inner.start() }

    mutating func receivedFrame(_ frame: Frame) -> HandshakeStateMachine.Action {
        guard forged else {
            forged = true
            return .send(.retry(suite: suite.rawValue))
        }
        return inner.receivedFrame(frame)
    }
}
