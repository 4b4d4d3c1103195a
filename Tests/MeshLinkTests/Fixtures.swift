import Crypto
import Foundation
@testable import MeshLink
import MeshNoise
import MeshTestSupport
import MeshRatchet
import MeshWire
import NIOCore
import Testing

// Shared fixtures of the MeshLink tests: fixed keys, handshake parties pumped against each other,
// a fake Noise peer that sends payloads the real state machine never would, and small helpers.

/// 32 consecutive bytes starting at `first` (e.g. 0x00…0x1f): fixed key material for vectors.
func pattern(from first: UInt8, count: Int = 32) -> [UInt8] {
    (0..<count).map { first &+ UInt8(truncatingIfNeeded: $0) }
}

/// The raw bytes of a symmetric key.
func bytes(of key: SymmetricKey) -> [UInt8] {
    key.withUnsafeBytes { Array($0) }
}

/// The fixed keys of one vector party (PROTOCOL.md §2.1): Ed25519 identity, X25519 static and
/// ephemeral, each from a byte pattern.
struct FixedParty {
    var name: String
    var identitySeed: [UInt8]
    var staticSeed: [UInt8]
    var ephemeralSeed: [UInt8]
    var udpPort: UInt16
    /// The private key of its signed prekey (id 1, §19.1), announced in its handshake (§4.3).
    var prekeySeed: [UInt8]

    var signingKey: Curve25519.Signing.PrivateKey { try! .init(rawRepresentation: identitySeed) }
    var staticKey: Curve25519.KeyAgreement.PrivateKey { try! .init(rawRepresentation: staticSeed) }
    var ephemeralKey: Curve25519.KeyAgreement.PrivateKey { try! .init(rawRepresentation: ephemeralSeed) }
    var identity: LocalIdentity { try! LocalIdentity(signingKey: signingKey, staticKey: staticKey) }
    /// Its signed prekey, id 1 (Ed25519 is deterministic, so the signature is fixed too).
    var signedPrekey: SignedPrekey { try! SignedPrekey(id: 1, key: .init(rawRepresentation: prekeySeed), identity: signingKey) }

    /// Its handshake configuration; it offers only ChaChaPoly unless told (not the machine's
    /// hardware-dependent ``CipherSuite/localOffer``), so that fixed handshakes are reproducible.
    func configuration(serviceType: String = "meshchat", suites: [CipherSuite] = [.chaChaPoly]) -> HandshakeStateMachine.Configuration {
        var configuration = HandshakeStateMachine.Configuration(identity: identity, displayName: name, serviceType: serviceType,
                                                                udpPort: udpPort, capabilities: ["udp"])
        configuration.signedPrekey = signedPrekey
        configuration.suites = suites
        return configuration
    }

    /// The vector initiator: identity 0x00…, static 0x20…, ephemeral 0x40…, prekey 0xe0….
    static let alice = FixedParty(
        name: "alice", identitySeed: pattern(from: 0x00), staticSeed: pattern(from: 0x20),
        ephemeralSeed: pattern(from: 0x40), udpPort: 40001, prekeySeed: pattern(from: 0xe0))
    /// The vector responder: identity 0x60…, static 0x80…, ephemeral 0xa0…, prekey 0xa0… (the
    /// prekey the sealed vectors begin their sessions on).
    static let bob = FixedParty(
        name: "bob", identitySeed: pattern(from: 0x60), staticSeed: pattern(from: 0x80),
        ephemeralSeed: pattern(from: 0xa0), udpPort: 40002, prekeySeed: pattern(from: 0xa0))
}

/// A configuration with a fresh random identity.
func randomConfiguration(
    _ name: String, serviceType: String = "meshchat", udpPort: UInt16 = 0, capabilities: [String] = [],
    suites: [CipherSuite] = [.chaChaPoly]
) throws -> HandshakeStateMachine.Configuration {
    var configuration = HandshakeStateMachine.Configuration(
        identity: try .generate(), displayName: name, serviceType: serviceType, udpPort: udpPort, capabilities: capabilities)
    configuration.suites = suites
    return configuration
}

// MARK: - Parties and the pump

/// One end of a handshake: the real ``HandshakeStateMachine`` or a ``FakeNoisePeer``.
protocol HandshakeParty {
    mutating func start() -> HandshakeStateMachine.Action
    mutating func receivedFrame(_ frame: Frame) -> HandshakeStateMachine.Action
}

extension HandshakeStateMachine: HandshakeParty {}

/// How a handshake ended for one side.
enum Outcome {
    case pending
    case established(EstablishedLink)
    case aborted(LinkCloseReason)

    var link: EstablishedLink? {
        if case .established(let link) = self { return link }
        return nil
    }
    var reason: LinkCloseReason? {
        if case .aborted(let reason) = self { return reason }
        return nil
    }
}

/// Pumps two parties against each other: every frame one side writes is encoded, optionally
/// altered, parsed back with ``FrameParser`` and handed to the other side, until nobody writes.
struct Pump<Initiator: HandshakeParty, Responder: HandshakeParty> {
    enum Side { case initiator, responder }

    var initiator: Initiator
    var responder: Responder
    var initiatorOutcome = Outcome.pending
    var responderOutcome = Outcome.pending
    /// Every frame written, in order, as sent (before any tampering).
    var transcript: [(from: Side, bytes: [UInt8])] = []
    /// Alters the encoded frame with this transcript index before delivery.
    var tamper: (_ index: Int, _ frame: inout [UInt8]) -> Void = { _, _ in }

    init(_ initiator: Initiator, _ responder: Responder) {
        self.initiator = initiator
        self.responder = responder
    }

    /// Starts the initiator and runs until neither side has a frame to send.
    mutating func run() {
        handle(initiator.start(), from: .initiator)
    }

    /// The frames of the transcript of one type.
    func frames(_ type: FrameType) -> [[UInt8]] {
        transcript.map(\.bytes).filter { $0[4] == type.rawValue }
    }

    private mutating func handle(_ action: HandshakeStateMachine.Action, from side: Side) {
        switch action {
        case .none:
            return
        case .send(let frame):
            deliver(frame, from: side)
        case .established(let link, let frame):
            setOutcome(.established(link), side)
            if let frame { deliver(frame, from: side) }
        case .abort(let reason, let frame):
            setOutcome(.aborted(reason), side)
            if let frame { deliver(frame, from: side) }
        }
    }

    private mutating func setOutcome(_ outcome: Outcome, _ side: Side) {
        switch side {
        case .initiator: initiatorOutcome = outcome
        case .responder: responderOutcome = outcome
        }
    }

    private mutating func deliver(_ frame: Frame, from side: Side) {
        var bytes = frameBytes(frame)
        transcript.append((side, bytes))
        tamper(transcript.count - 1, &bytes)
        let received = parseOne(bytes)
        switch side {
        case .initiator: handle(responder.receivedFrame(received), from: .responder)
        case .responder: handle(initiator.receivedFrame(received), from: .initiator)
        }
    }
}

/// A handshake of two real machines.
func machinePump(
    _ initiator: HandshakeStateMachine.Configuration, _ responder: HandshakeStateMachine.Configuration
) throws -> Pump<HandshakeStateMachine, HandshakeStateMachine> {
    Pump(
        try HandshakeStateMachine(role: .initiator, configuration: initiator),
        try HandshakeStateMachine(role: .responder, configuration: responder))
}

/// A peer that drives `NoiseHandshake` directly, so that it can send hellos and identity
/// payloads the real state machine never would (a wrong version, a forged signature…).
///
/// It performs no checks of its own. A Noise failure ends it with a local `handshakeFailed`
/// (no ABORT); an ABORT frame from the real machine ends it with that remote reason.
struct FakeNoisePeer: HandshakeParty {
    var noise: NoiseHandshake
    /// The payload of message 1 (initiator only).
    var hello: Data
    /// The payload of message 2 or 3.
    var identity: Data
    /// The payloads this peer decrypted.
    var received: [Data] = []

    init(
        initiator: Bool, serviceType: String = "meshchat", prologue: [UInt8]? = nil,
        staticKey: Curve25519.KeyAgreement.PrivateKey = .init(),
        hello: Data? = nil, identity: Data
    ) throws {
        self.noise = try NoiseHandshake(
            protocolName: HandshakeStateMachine.noiseProtocol, initiator: initiator,
            prologue: prologue ?? HandshakeStateMachine.prologue(serviceType: serviceType), staticKey: staticKey)
        self.hello = hello ?? helloPayload(version: HandshakeStateMachine.protocolVersion, serviceType: serviceType)
        self.identity = identity
    }

    mutating func start() -> HandshakeStateMachine.Action {
        guard noise.isInitiator else { return .none }
        return .send(Frame(type: .handshake, body: ByteBuffer(bytes: try! noise.writeMessage(payload: hello))))
    }

    mutating func receivedFrame(_ frame: Frame) -> HandshakeStateMachine.Action {
        switch frame.type {
        case .abort:
            let (code, reason) = try! frame.abortContents()
            return .abort(LinkCloseReason(code, reason, isRemote: true), send: nil)
        case .transport:
            return .abort(LinkCloseReason(.protocolViolation, "fake peer got TRANSPORT"), send: nil)
        case .retry:
            return .abort(LinkCloseReason(.protocolViolation, "fake peer got RETRY"), send: nil)
        case .handshake:
            do {
                received.append(try noise.readMessage(Data(frame.body.readableBytesView)))
            } catch {
                return .abort(LinkCloseReason(.handshakeFailed, "fake peer could not read: \(error)"), send: nil)
            }
            guard noise.isMyTurnToWrite else { return .none }
            return .send(Frame(type: .handshake, body: ByteBuffer(bytes: try! noise.writeMessage(payload: identity))))
        }
    }
}

/// A serialized `Hello` (§4.3).
func helloPayload(version: UInt32, serviceType: String, suites: [CipherSuite] = [.chaChaPoly], retryOf: CipherSuite? = nil) -> Data {
    var hello = HelloPayload()
    hello.protocolVersion = version
    hello.serviceType = serviceType
    hello.suites = suites.map { UInt32($0.rawValue) }
    hello.suite = UInt32(retryOf.map { _ in suites.last ?? .chaChaPoly }?.rawValue ?? suites.first?.rawValue ?? 1)
    hello.retryOf = UInt32(retryOf?.rawValue ?? 0)
    return hello.encoded
}

/// A serialized `HandshakeIdentity` that is valid for `identity` unless the caller alters it.
func identityPayload(
    _ identity: LocalIdentity, displayName: String = "fake", udpPort: UInt32 = 0, prekey: SignedPrekey? = nil,
    suites: [CipherSuite] = [.chaChaPoly], alter: (inout IdentityPayload) -> Void = { _ in }
) -> Data {
    var payload = IdentityPayload()
    payload.displayName = displayName
    payload.protocolVersion = HandshakeStateMachine.protocolVersion
    payload.capabilities = ["udp"]
    payload.identityKey = identity.signingKey.publicKey.rawRepresentation
    payload.staticSignature = identity.staticSignature
    payload.udpPort = udpPort
    payload.suites = suites.map { UInt32($0.rawValue) }
    if let prekey {
        payload.signedPrekey.id = prekey.id
        payload.signedPrekey.publicKey = prekey.publicKey
        payload.signedPrekey.signature = prekey.signature
    }
    alter(&payload)
    return payload.encoded
}

// MARK: - Machines in a given state

/// A responder that read a genuine message 1 and waits for message 3, with the initiator that
/// wrote it (waiting for message 2).
func machinesAfterMessage1() throws -> (initiator: HandshakeStateMachine, responder: HandshakeStateMachine) {
    var initiator = try HandshakeStateMachine(role: .initiator, configuration: try randomConfiguration("i"))
    var responder = try HandshakeStateMachine(role: .responder, configuration: try randomConfiguration("r"))
    guard case .send(let message1) = initiator.start(), case .send = responder.receivedFrame(message1) else {
        Issue.record("the genuine handshake did not get past message 1")
        return (initiator, responder)
    }
    return (initiator, responder)
}

/// Checks that a machine mid-handshake reports a received ABORT frame as the peer's reason.
/// - Parameters:
///   - abort: the ABORT frame the detecting side sent.
///   - receiver: a machine that has not finished its handshake.
///   - code: the close code the detecting side used.
///   - message: the detecting side's reason text.
func expectReportedByPeer(
    _ abort: Frame?, to receiver: inout HandshakeStateMachine, code: CloseCode, message: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let abort else {
        Issue.record("the detecting side sent no ABORT frame", sourceLocation: sourceLocation)
        return
    }
    #expect(abort.type == .abort, sourceLocation: sourceLocation)
    let parsed = parseOne(frameBytes(abort))
    guard case .abort(let reason, let reply) = receiver.receivedFrame(parsed) else {
        Issue.record("the peer did not abort on the ABORT frame", sourceLocation: sourceLocation)
        return
    }
    #expect(reason.isRemote, sourceLocation: sourceLocation)
    #expect(reason.code == code, sourceLocation: sourceLocation)
    if message.utf8.count <= WireLimits.maxAbortReasonBytes {
        #expect(reason.message == message, sourceLocation: sourceLocation)
    } else {  // the sender truncates the reason at a character boundary (§3.2)
        #expect(!reason.message.isEmpty && message.hasPrefix(reason.message), sourceLocation: sourceLocation)
        #expect(reason.message.utf8.count <= WireLimits.maxAbortReasonBytes, sourceLocation: sourceLocation)
    }
    #expect(reply == nil, "nobody answers an ABORT", sourceLocation: sourceLocation)
}

// MARK: - Frames

/// The full bytes of a frame, header included.
func frameBytes(_ frame: Frame) -> [UInt8] {
    var buffer = ByteBuffer()
    frame.encode(into: &buffer)
    return Array(buffer.readableBytesView)
}

/// Parses exactly one frame from its bytes (a test failure, not a trap, when it does not parse).
func parseOne(_ bytes: [UInt8]) -> Frame {
    var buffer = ByteBuffer(bytes: bytes)
    do {
        guard let frame = try FrameParser().parse(&buffer), buffer.readableBytes == 0 else {
            Issue.record("\(bytes.count) bytes are not exactly one frame")
            return Frame(type: .abort, body: ByteBuffer(bytes: [0]))
        }
        return frame
    } catch {
        Issue.record("frame does not parse: \(error)")
        return Frame(type: .abort, body: ByteBuffer(bytes: [0]))
    }
}

/// Every frame in a buffer, in order.
func parseAll(_ buffer: ByteBuffer) throws -> [Frame] {
    var buffer = buffer
    var frames: [Frame] = []
    while let frame = try FrameParser().parse(&buffer) { frames.append(frame) }
    #expect(buffer.readableBytes == 0, "trailing bytes after the last frame")
    return frames
}

/// A copy of a frame with one body byte flipped.
func flipping(_ frame: Frame, bodyByte index: Int) -> Frame {
    var body = Array(frame.body.readableBytesView)
    body[index] ^= 0x01
    return Frame(type: frame.type, body: ByteBuffer(bytes: body))
}

// MARK: - Actions and outcomes

extension HandshakeStateMachine.Action {
    var isNone: Bool {
        if case .none = self { return true }
        return false
    }
    /// The frame of a ``send(_:)`` action.
    var sentFrame: Frame? {
        if case .send(let frame) = self { return frame }
        return nil
    }
    /// The reason and frame of an ``abort(_:send:)`` action.
    var abort: (reason: LinkCloseReason, frame: Frame?)? {
        if case .abort(let reason, let frame) = self { return (reason, frame) }
        return nil
    }
}

/// Checks a refusal seen from both sides: the detecting side aborted with `code` and a message
/// naming the problem; the other side received its ABORT and reports the same code and message.
func expectRefusal(
    detector: Outcome, peer: Outcome, code: CloseCode, mentions: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let local = detector.reason else {
        Issue.record("the detecting side did not abort: \(detector)", sourceLocation: sourceLocation)
        return
    }
    #expect(local.code == code, "\(local)", sourceLocation: sourceLocation)
    #expect(!local.isRemote, sourceLocation: sourceLocation)
    for part in mentions {
        #expect(local.message.contains(part), "\"\(local.message)\" does not mention \"\(part)\"", sourceLocation: sourceLocation)
    }
    guard let remote = peer.reason else {
        Issue.record("the other side did not report the abort: \(peer)", sourceLocation: sourceLocation)
        return
    }
    #expect(remote.isRemote, sourceLocation: sourceLocation)
    #expect(remote.code == code, "\(remote)", sourceLocation: sourceLocation)
    if local.message.utf8.count <= WireLimits.maxAbortReasonBytes {
        #expect(remote.message == local.message, sourceLocation: sourceLocation)
    } else {
        #expect(!remote.message.isEmpty && local.message.hasPrefix(remote.message), sourceLocation: sourceLocation)
    }
}

/// The last ABORT frame of a pump's transcript.
extension Pump {
    var lastAbort: Frame? {
        frames(.abort).last.map(parseOne)
    }
}
