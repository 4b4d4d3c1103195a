import Crypto
import MeshRatchet
import struct Foundation.Data
import MeshNoise
import MeshWire
import NIOCore

/// The meshchat handshake as a pure state machine (PROTOCOL.md §4).
///
/// Noise XX with a prologue that binds the protocol name, version and service type. The initiator
/// sends a clear-text ``HelloPayload`` in message 1 so that a responder can explain a version or
/// service mismatch; messages 2 and 3 carry each side's ``IdentityPayload``, whose static-key
/// signature binds the Noise static key to the peer's identity key (§2.4).
///
/// The cipher suite (§4.11) is negotiated in message 1: the hello lists the initiator's suites and
/// names the one message 1 is written with (the initiator's first). The responder reads the hello
/// before it starts Noise (the payload follows `e` in clear); when the offers select another suite
/// it answers once with a RETRY frame, and the initiator writes message 1 again with that suite, the
/// retry bound into the prologue. Message 2 carries the responder's suites, and the initiator checks
/// that the suite in use is the one both offers select (``CloseCode/suiteDowngrade`` otherwise).
///
/// ```
/// initiator: idle ──start──► awaitingMessage2 ──RETRY (once)──► awaitingMessage2 (sends msg 1 again)
///                            awaitingMessage2 ──msg 2──► done (sends msg 3)
/// responder: idle ──msg 1, suites agree──► awaitingMessage3 (sends msg 2) ──msg 3──► done
///            idle ──msg 1, other suite──► awaitingMessage1 (sends RETRY, once)
/// any state ──ABORT, bad frame or failed check──► failed
/// ```
///
/// Every input returns an ``Action`` for the shell to carry out: frames to write, the established
/// link, or an abort with the frame that tells the peer why. No I/O, no clocks: the shell owns the
/// 10 s timeout (§4.5) and reports it with ``timedOut()``.
public struct HandshakeStateMachine: Sendable {
    /// Which end of the TCP connection this side is.
    public enum Role: Sendable, Hashable {
        /// The side that opened the connection; writes message 1.
        case initiator
        /// The side that accepted the connection.
        case responder
    }

    /// What this node says about itself in the handshake.
    public struct Configuration: Sendable {
        /// The long-term keys.
        public var identity: LocalIdentity
        /// The display name, 1–63 bytes of UTF-8.
        public var displayName: String
        /// The service type bound into the prologue (§4.2).
        public var serviceType: String
        /// The UDP port to announce; 0 for none.
        public var udpPort: UInt16
        /// Capability tokens to announce.
        public var capabilities: [String]
        /// Initiator only: makes the link an invitation (sent in message 3, §4.8).
        public var invitation: InvitationRequest?
        /// The node's current signed prekey (§19.1), so that the peer can seal to it at once.
        public var signedPrekey: SignedPrekey?
        /// The cipher suites this node offers, most preferred first (§4.11); ChaChaPoly is added
        /// when missing. Defaults to ``CipherSuite/localOffer`` (hardware AES, `MESHCHAT_SUITES`).
        public var suites: [CipherSuite] = CipherSuite.localOffer
        /// Initiator only: the responder's offer as learnt before dialling (its DNS-SD TXT `_s`,
        /// PROTOCOL.md §12.2), most preferred first; `nil` when unknown. Message 1 is then written
        /// with the suite the two offers select, which saves a RETRY when the responder lacks this
        /// node's first suite. A guess, never trusted: the negotiation of §4.11 is unchanged, so a
        /// wrong or forged hint costs one RETRY and can never make the link use a weaker suite.
        public var peerSuites: [CipherSuite]?

        /// Creates a configuration.
        /// - Parameters:
        ///   - identity: the long-term keys.
        ///   - displayName: the display name.
        ///   - serviceType: the service type; defaults to `meshchat`.
        ///   - udpPort: the UDP port to announce.
        ///   - capabilities: capability tokens.
        public init(
            identity: LocalIdentity,
            displayName: String,
            serviceType: String = "meshchat",
            udpPort: UInt16 = 0,
            capabilities: [String] = []
        ) {
            self.identity = identity
            self.displayName = displayName
            self.serviceType = serviceType
            self.udpPort = udpPort
            self.capabilities = capabilities
        }
    }

    /// What the shell must do after an input.
    public enum Action: Sendable {
        /// Nothing.
        case none
        /// Write this frame.
        case send(Frame)
        /// The handshake is complete; write `frame` first when there is one.
        case established(EstablishedLink, send: Frame?)
        /// The handshake failed: write `frame` when there is one (an ABORT), then close.
        case abort(LinkCloseReason, send: Frame?)
    }

    enum State {
        case idle
        case awaitingMessage1
        case awaitingMessage2
        case awaitingMessage3
        case done
        case failed
    }

    /// The protocol version this implementation speaks (§4.2).
    public static let protocolVersion: UInt32 = 8
    /// The Noise protocol name of the mandatory suite (§4.1).
    public static let noiseProtocol = CipherSuite.chaChaPoly.noiseProtocol

    /// This side's role.
    public let role: Role
    let configuration: Configuration
    /// The suites this node offers, most preferred first (the configuration's, normalized).
    let offer: [CipherSuite]
    /// The Noise state; the responder's is `nil` until it has read the hello of message 1.
    var noise: NoiseHandshake?
    /// The suite of the current attempt: the initiator's guess, or the suite message 1 used.
    public internal(set) var suite: CipherSuite
    /// The RETRY of this connection, once sent (responder) or acted on (initiator): the suite
    /// message 1 was first written with and the suite the responder asked for (§4.11).
    var retry: (from: CipherSuite, to: CipherSuite)?
    let ephemeralKey: Curve25519.KeyAgreement.PrivateKey?
    let retryEphemeralKey: Curve25519.KeyAgreement.PrivateKey?
    var state: State
    private var receivedInvitation: Result<InvitationRequest?, LinkCloseReason> = .success(nil)

    /// The prologue of §4.2 for a service type (and §4.11: a retried handshake binds its RETRY).
    /// - Parameters:
    ///   - serviceType: the service type.
    ///   - retry: the RETRY this handshake follows, if any.
    /// - Returns: `"meshchat" ‖ 0 ‖ version ‖ 0 ‖ serviceType`, then for a retried handshake
    ///   `0 ‖ "retry" ‖ from suite u8 ‖ to suite u8`.
    public static func prologue(serviceType: String, retry: (from: CipherSuite, to: CipherSuite)? = nil) -> [UInt8] {
        var prologue = Array("meshchat".utf8) + [0, UInt8(protocolVersion), 0] + Array(serviceType.utf8)
        if let retry { prologue += [0] + Array("retry".utf8) + [retry.from.rawValue, retry.to.rawValue] }
        return prologue
    }

    /// Creates a handshake.
    /// - Parameters:
    ///   - role: initiator or responder.
    ///   - configuration: what this node says about itself.
    ///   - ephemeralKey: a fixed ephemeral key for test vectors; random when `nil`.
    ///   - retryEphemeralKey: a fixed ephemeral key for a message 1 written again after a RETRY
    ///     (test vectors); random when `nil`. Never the first one: no ephemeral key is used twice.
    /// - Throws: `NoiseError` when the Noise state cannot be created (not expected).
    public init(
        role: Role,
        configuration: Configuration,
        ephemeralKey: Curve25519.KeyAgreement.PrivateKey? = nil,
        retryEphemeralKey: Curve25519.KeyAgreement.PrivateKey? = nil
    ) throws {
        self.role = role
        self.configuration = configuration
        self.offer = CipherSuite.normalizedOffer(configuration.suites)
        self.suite = Self.firstSuite(offer: offer, role: role, peerSuites: configuration.peerSuites)
        self.ephemeralKey = ephemeralKey
        self.retryEphemeralKey = retryEphemeralKey
        self.noise = role == .initiator ? try Self.makeNoise(self.suite, role: role, configuration: configuration, retry: nil, ephemeralKey: ephemeralKey) : nil
        self.state = role == .initiator ? .idle : .awaitingMessage1
    }

    /// The suite message 1 is first written with: the one this node's offer selects against the
    /// responder's offer learnt before dialling (§4.11, "one it learnt otherwise"), else this node's
    /// most preferred suite. A responder's first suite is decided by the hello it reads.
    static func firstSuite(offer: [CipherSuite], role: Role, peerSuites: [CipherSuite]?) -> CipherSuite {
        guard role == .initiator, let peerSuites,
              let selected = CipherSuite.select(initiator: offer, responder: peerSuites) else { return offer[0] }
        return selected
    }

    /// A Noise handshake for one attempt.
    static func makeNoise(
        _ suite: CipherSuite, role: Role, configuration: Configuration,
        retry: (from: CipherSuite, to: CipherSuite)?, ephemeralKey: Curve25519.KeyAgreement.PrivateKey?
    ) throws -> NoiseHandshake {
        try NoiseHandshake(
            protocolName: suite.noiseProtocol,
            initiator: role == .initiator,
            prologue: prologue(serviceType: configuration.serviceType, retry: retry),
            staticKey: configuration.identity.staticKey,
            ephemeralKey: ephemeralKey)
    }

    // MARK: Inputs

    /// Starts the handshake: the initiator writes message 1; a responder waits.
    /// - Returns: the frame to send, or ``Action/none`` for a responder.
    public mutating func start() -> Action {
        guard role == .initiator, case .idle = state else { return .none }
        return writeMessage1()
    }

    /// A frame arrived from the peer.
    /// - Parameter frame: the decoded frame.
    /// - Returns: what to do next.
    public mutating func receivedFrame(_ frame: Frame) -> Action {
        switch (frame.type, state) {
        case (.abort, .done), (.abort, .failed), (_, .failed), (_, .done):
            return .none
        case (.abort, _):
            state = .failed
            let (code, reason) = (try? frame.abortContents()) ?? (.protocolViolation, "")
            return .abort(LinkCloseReason(code, reason.isEmpty ? "peer aborted the handshake" : reason, isRemote: true), send: nil)
        case (.transport, _):
            return fail(.protocolViolation, "TRANSPORT frame received before the handshake completed")
        case (.handshake, .awaitingMessage1):
            return receivedMessage1(frame.body)
        case (.handshake, .awaitingMessage2):
            return receivedMessage2(frame.body)
        case (.handshake, .awaitingMessage3):
            return receivedMessage3(frame.body)
        case (.handshake, .idle):
            return fail(.protocolViolation, "HANDSHAKE frame received before this side started")
        case (.retry, .awaitingMessage2) where role == .initiator:
            return receivedRetry(frame)
        case (.retry, _):
            return fail(.protocolViolation, "RETRY frame received \(role == .initiator ? "after message 2" : "by the responder")")
        }
    }

    /// The shell's handshake deadline passed (§4.5).
    /// - Returns: an abort unless the handshake already ended.
    public mutating func timedOut() -> Action {
        switch state {
        case .done, .failed: return .none
        default:
            return fail(.handshakeTimeout, "the handshake did not complete within \(Int(HandshakeStateMachine.timeoutSeconds)) s")
        }
    }

    /// The handshake deadline of §4.5, in seconds.
    public static let timeoutSeconds: Double = 10

    // MARK: Messages

    private mutating func receivedMessage1(_ body: ByteBuffer) -> Action {
        let message = Data(body.readableBytesView)
        // Message 1 is `e` (32 bytes) then the hello in clear: read before Noise starts (§4.11).
        guard message.count >= 32 else {
            return fail(.protocolViolation,
                "handshake message 1 is malformed: \(message.count) bytes are fewer than its 32-byte ephemeral key")
        }
        let hello: HelloPayload
        do {
            hello = try HelloPayload(decoding: message.dropFirst(32))
        } catch {
            return fail(.protocolViolation, "handshake message 1: \(error)")
        }
        guard hello.protocolVersion == Self.protocolVersion else {
            return fail(.unsupportedVersion,
                "peer speaks protocol version \(hello.protocolVersion); this peer speaks \(Self.protocolVersion)")
        }
        guard hello.serviceType == configuration.serviceType else {
            return fail(.serviceMismatch,
                "peer uses service type \"\(hello.serviceType.prefix(64))\"; this peer uses \"\(configuration.serviceType)\"")
        }
        let used: CipherSuite
        switch respondingSuite(to: hello) {
        case .use(let suite): used = suite
        case .retry(let frame): return .send(frame)
        case .fail(let reason): return fail(reason.code, reason.message)
        }
        suite = used
        do {
            var noise = try Self.makeNoise(used, role: role, configuration: configuration, retry: retry, ephemeralKey: ephemeralKey)
            _ = try noise.readMessage(message)
            self.noise = noise
        } catch {
            return fail(.protocolViolation, "handshake message 1 is malformed: \(error)")
        }
        do {
            let message = try writeNoise(identityPayload().encoded)
            state = .awaitingMessage3
            return .send(Frame(type: .handshake, body: ByteBuffer(bytes: message)))
        } catch {
            return fail(.handshakeFailed, "could not write handshake message 2: \(error)", tell: false)
        }
    }

    private mutating func receivedMessage2(_ body: ByteBuffer) -> Action {
        let peer: RemotePeer
        switch readIdentity(body, messageNumber: 2) {
        case .success(let remote): peer = remote
        case .failure(let reason): return fail(reason.code, reason.message)
        }
        do {
            let message = try writeNoise(identityPayload().encoded)
            return finish(peer: peer, send: Frame(type: .handshake, body: ByteBuffer(bytes: message)))
        } catch {
            return fail(.handshakeFailed, "could not write handshake message 3: \(error)", tell: false)
        }
    }

    private mutating func receivedMessage3(_ body: ByteBuffer) -> Action {
        switch readIdentity(body, messageNumber: 3) {
        case .success(let peer):
            switch receivedInvitation {
            case .success(let invitation): return finish(peer: peer, send: nil, invitation: invitation)
            case .failure(let reason): return fail(reason.code, reason.message)
            }
        case .failure(let reason): return fail(reason.code, reason.message)
        }
    }

    private mutating func finish(peer: RemotePeer, send frame: Frame?, invitation: InvitationRequest? = nil) -> Action {
        guard peer.nodeID != configuration.identity.nodeID else {
            state = .failed
            let reason = LinkCloseReason(.selfConnection, "connected to itself (node \(peer.nodeID.shortHex))")
            return .abort(reason, send: frame)
        }
        do {
            guard let noise else { throw LinkCloseReason(.handshakeFailed, "no Noise state") }
            let (send, receive) = try noise.split()
            let datagramKeys = try DatagramKeys(handshake: noise, role: role)
            state = .done
            let link = EstablishedLink(
                peer: peer, role: role,
                channel: SecureChannel(send: send, receive: receive),
                suite: suite,
                datagramKeys: datagramKeys,
                handshakeHash: noise.handshakeHash,
                invitation: invitation)
            return .established(link, send: frame)
        } catch {
            return fail(.handshakeFailed, "could not derive transport keys: \(error)", tell: false)
        }
    }

    // MARK: Helpers

    func identityPayload() -> IdentityPayload {
        var payload = IdentityPayload()
        if role == .initiator, let invitation = configuration.invitation {
            var request = InvitationPayload()
            request.context = invitation.context
            request.timeoutMs = invitation.timeoutMilliseconds
            payload.invitation = request
        }
        payload.displayName = configuration.displayName
        payload.protocolVersion = Self.protocolVersion
        payload.capabilities = configuration.capabilities
        payload.identityKey = configuration.identity.signingKey.publicKey.rawRepresentation
        payload.staticSignature = configuration.identity.staticSignature
        payload.udpPort = UInt32(configuration.udpPort)
        if let prekey = configuration.signedPrekey {
            payload.signedPrekey.id = prekey.id
            payload.signedPrekey.publicKey = prekey.publicKey
            payload.signedPrekey.signature = prekey.signature
        }
        if let latest = configuration.identity.rotations.first { payload.rotation = latest }
        payload.suites = offer.map { UInt32($0.rawValue) }
        return payload
    }

    private mutating func readIdentity(_ body: ByteBuffer, messageNumber: Int) -> Result<RemotePeer, LinkCloseReason> {
        let plaintext: Data
        do {
            guard var noise else { throw LinkCloseReason(.handshakeFailed, "no Noise state") }
            plaintext = try noise.readMessage(Data(body.readableBytesView))
            self.noise = noise
        } catch {
            return .failure(LinkCloseReason(.handshakeFailed,
                "handshake message \(messageNumber) failed to authenticate (\(error)): the peer uses a different protocol version or service type, or the message was altered"))
        }
        let payload: IdentityPayload
        do {
            payload = try IdentityPayload(decoding: plaintext)
        } catch {
            return .failure(LinkCloseReason(.protocolViolation, "handshake message \(messageNumber): \(error)"))
        }
        // §4.4: the identity repeats the version the hello agreed (and the prologue bound).
        guard payload.protocolVersion == Self.protocolVersion else {
            return .failure(LinkCloseReason(.unsupportedVersion,
                "handshake message \(messageNumber) names protocol version \(payload.protocolVersion); this peer speaks \(Self.protocolVersion)"))
        }
        if let problem = PeerID.displayNameProblem(payload.displayName) {
            return .failure(LinkCloseReason(.invalidIdentity, "invalid display name from the peer: \(problem)"))
        }
        guard payload.identityKey.count == 32,
              let identityKey = try? Curve25519.Signing.PublicKey(rawRepresentation: payload.identityKey)
        else {
            return .failure(LinkCloseReason(.invalidIdentity,
                "peer's identity key is \(payload.identityKey.count) bytes; expected a 32-byte Ed25519 public key"))
        }
        // §4.11: the suite in use must be the one the offers select (message 2 states the responder's).
        if messageNumber == 2, let problem = checkSuite(responderOffer: payload.suites) {
            return .failure(problem)
        }
        guard let remoteStatic = noise?.remoteStaticKey else {
            return .failure(LinkCloseReason(.handshakeFailed, "handshake message \(messageNumber) carried no static key"))
        }
        guard LocalIdentity.verifyStaticSignature(payload.staticSignature, staticKey: remoteStatic, identityKey: identityKey) else {
            return .failure(LinkCloseReason(.invalidIdentity,
                "peer's identity signature does not match its Noise static key (node \(LocalIdentity.nodeID(identityKey: identityKey).shortHex))"))
        }
        guard payload.udpPort <= UInt32(UInt16.max) else {
            return .failure(LinkCloseReason(.protocolViolation, "peer's UDP port \(payload.udpPort) is not a port number"))
        }
        receivedInvitation = .success(nil)
        if messageNumber == 3, payload.hasInvitation {
            let request = payload.invitation
            if request.context.count > WireLimits.maxInvitationContext {
                receivedInvitation = .failure(LinkCloseReason(.protocolViolation,
                    "invitation context of \(request.context.count) bytes exceeds the maximum \(WireLimits.maxInvitationContext)"))
            } else if !WireLimits.invitationTimeoutMilliseconds.contains(request.timeoutMs) {
                receivedInvitation = .failure(LinkCloseReason(.protocolViolation,
                    "invitation timeout \(request.timeoutMs) ms is outside \(WireLimits.invitationTimeoutMilliseconds.lowerBound)–\(WireLimits.invitationTimeoutMilliseconds.upperBound) ms"))
            } else {
                receivedInvitation = .success(InvitationRequest(context: request.context, timeoutMilliseconds: request.timeoutMs))
            }
        }
        var prekey: SignedPrekey?
        if payload.hasSignedPrekey {
            let received = SignedPrekey(id: payload.signedPrekey.id, publicKey: payload.signedPrekey.publicKey,
                                        signature: payload.signedPrekey.signature)
            guard (try? received.verified(by: identityKey)) != nil else {
                return .failure(LinkCloseReason(.invalidIdentity, "peer's signed prekey \(received.id) is not signed by its identity key (§19.1)"))
            }
            prekey = received
        }
        return .success(RemotePeer(
            nodeID: LocalIdentity.nodeID(identityKey: identityKey),
            displayName: payload.displayName,
            identityKey: payload.identityKey,
            staticKey: remoteStatic.rawRepresentation,
            protocolVersion: payload.protocolVersion,
            capabilities: payload.capabilities,
            udpPort: UInt16(payload.udpPort),
            signedPrekey: prekey,
            rotation: payload.hasRotation ? payload.rotation : nil))
    }

    /// Fails the handshake; `tell` sends an ABORT frame with the reason (§4.4).
    mutating func fail(_ code: CloseCode, _ message: String, tell: Bool = true) -> Action {
        state = .failed
        let reason = LinkCloseReason(code, message)
        return .abort(reason, send: tell ? Frame.abort(code, reason: message) : nil)
    }
}

