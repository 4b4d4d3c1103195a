import Crypto
import Foundation
@testable import MeshLink
@testable import MeshNoise
import MeshTestSupport
import MeshRatchet
import MeshWire
import NIOCore
import Testing

/// `Protocol/vectors/handshake.json` and `handshake-aesgcm.json` (PROTOCOL.md §11): a complete
/// handshake between two fixed identities with fixed ephemeral keys, on the ChaChaPoly suite (both
/// offer only it) and on the AESGCM suite (both offer AESGCM then ChaChaPoly), the first transport
/// frame in each direction and the datagram keys.
///
/// Regenerate with `MESHCHAT_WRITE_VECTORS=1 swift test --filter MeshLinkTests.HandshakeVectorTests`.
struct HandshakeVector: Codable, Equatable {
    struct Party: Codable, Equatable {
        var displayName: String
        var serviceType: String
        var udpPort: Int
        var capabilities: [String]
        var identityPrivateKey: String
        var identityPublicKey: String
        var staticPrivateKey: String
        var staticPublicKey: String
        var ephemeralPrivateKey: String
        var ephemeralPublicKey: String
        var staticSignature: String
        var nodeID: String
        var prekeyID: UInt32
        var prekeyPrivateKey: String
        var prekeyPublicKey: String
        var prekeySignature: String
        var suites: [String]
    }
    struct Message: Codable, Equatable {
        var name: String
        var from: String
        var payload: String
        var frame: String
    }
    struct Transport: Codable, Equatable {
        var name: String
        var from: String
        var description: String
        var envelope: String
        var frame: String
    }
    struct DatagramKeysVector: Codable, Equatable {
        var description: String
        var keyI2R: String
        var keyR2I: String
        var tagI2R: String
        var tagR2I: String
    }

    var description: String
    var protocolName: String
    var prologue: String
    var ed25519Deterministic: Bool
    var initiator: Party
    var responder: Party
    var messages: [Message]
    var handshakeHash: String
    var transport: [Transport]
    var datagramKeys: DatagramKeysVector

    static let chatID = Data(pattern(from: 0xc0, count: 16))
    static let chatText = "hello bob"
    static let chatTime: Int64 = 1_700_000_000_000

    static let descriptionText = """
        A complete meshchat handshake (PROTOCOL.md §4) between two fixed identities: alice (initiator) and bob \
        (responder), service type "meshchat", with fixed ephemeral keys. Private keys are the raw 32 bytes \
        (Ed25519 seed; X25519 scalar before clamping); hex is lowercase. Ed25519 signatures are deterministic \
        (RFC 8032), so every frame is reproducible byte for byte. messages: the three HANDSHAKE frames, whole \
        (5-byte header included), with the plaintext payload each carries (Hello, then HandshakeIdentity). \
        transport: the first TRANSPORT frame in each direction, sealed with the cipher states of Split() at \
        nonce 0, each carrying one record (FIN) of the serialized envelope. datagramKeys: §8.1. \
        suites: each party's cipher suite offer (§4.11), most preferred first; the protocol name is the suite both select.
        """

    /// Runs the handshake of the fixed parties and records everything.
    static func compute(suite: CipherSuite = .chaChaPoly) throws -> HandshakeVector {
        let (alice, bob) = (FixedParty.alice, FixedParty.bob)
        let offer = offer(suite)
        var initiator = try HandshakeStateMachine(role: .initiator, configuration: alice.configuration(suites: offer), ephemeralKey: alice.ephemeralKey)
        var responder = try HandshakeStateMachine(role: .responder, configuration: bob.configuration(suites: offer), ephemeralKey: bob.ephemeralKey)
        let message1 = try #require(initiator.start().sentFrame)
        let message2 = try #require(responder.receivedFrame(message1).sentFrame)
        guard case .established(var initiatorLink, let message3?) = initiator.receivedFrame(message2),
              case .established(var responderLink, nil) = responder.receivedFrame(message3)
        else { throw VectorError("the fixed handshake did not complete") }

        let ping = Envelope.ping(nonce: 0)
        var pingFrame = ByteBuffer()
        try responderLink.channel.seal(ping, into: &pingFrame)
        let chat = Envelope.chat(id: chatID, text: chatText, sentAtMilliseconds: chatTime)
        var chatFrame = ByteBuffer()
        try initiatorLink.channel.seal(chat, into: &chatFrame)

        let keys = initiatorLink.datagramKeys  // the initiator sends i2r and receives r2i
        let hex = { (tag: UInt64) in withUnsafeBytes(of: tag.bigEndian) { Array($0) }.hexString }
        return HandshakeVector(
            description: descriptionText,
            protocolName: suite.noiseProtocol,
            prologue: HandshakeStateMachine.prologue(serviceType: "meshchat").hexString,
            ed25519Deterministic: true,
            initiator: party(alice, offer: offer),
            responder: party(bob, offer: offer),
            messages: [
                Message(name: "message1", from: "initiator", payload: helloPayload(version: HandshakeStateMachine.protocolVersion, serviceType: "meshchat", suites: offer).hexString,
                        frame: frameBytes(message1).hexString),
                Message(name: "message2", from: "responder", payload: identity(bob, offer: offer).hexString, frame: frameBytes(message2).hexString),
                Message(name: "message3", from: "initiator", payload: identity(alice, offer: offer).hexString, frame: frameBytes(message3).hexString),
            ],
            handshakeHash: initiatorLink.handshakeHash.hexString,
            transport: [
                Transport(
                    name: "responder_ping", from: "responder",
                    description: "Envelope ping { nonce: 0 }: the responder's key confirmation (§4.6), its first transport message",
                    envelope: ping.encoded.hexString, frame: Array(pingFrame.readableBytesView).hexString),
                Transport(
                    name: "initiator_chat", from: "initiator",
                    description: "Envelope chat { message_id: c0…cf, text: \"hello bob\", sent_at_ms: 1700000000000 }: the initiator's first transport message",
                    envelope: chat.encoded.hexString, frame: Array(chatFrame.readableBytesView).hexString),
            ],
            datagramKeys: DatagramKeysVector(
                description: "PROTOCOL.md §8.1: value = HMAC-SHA256(HMAC-SHA256(ck, \"\"), label ‖ 0x01) with ck the final "
                    + "chaining key and label e.g. \"meshchat udp key i2r\" (HKDF-SHA256 with salt ck, empty input key material, "
                    + "info label, 32 bytes). A tag is the first 8 bytes of its value, written here as on the wire.",
                keyI2R: bytes(of: keys.sendKey).hexString,
                keyR2I: bytes(of: keys.receiveKey).hexString,
                tagI2R: hex(keys.sendTag),
                tagR2I: hex(keys.receiveTag)))
    }

    /// Both parties' offer in the vector of `suite`.
    static func offer(_ suite: CipherSuite) -> [CipherSuite] { CipherSuite.normalizedOffer([suite]) }

    static func party(_ party: FixedParty, offer: [CipherSuite]) -> Party {
        Party(
            displayName: party.name, serviceType: "meshchat", udpPort: Int(party.udpPort), capabilities: ["udp"],
            identityPrivateKey: party.identitySeed.hexString,
            identityPublicKey: party.signingKey.publicKey.rawRepresentation.hexString,
            staticPrivateKey: party.staticSeed.hexString,
            staticPublicKey: party.staticKey.publicKey.rawRepresentation.hexString,
            ephemeralPrivateKey: party.ephemeralSeed.hexString,
            ephemeralPublicKey: party.ephemeralKey.publicKey.rawRepresentation.hexString,
            staticSignature: party.identity.staticSignature.hexString,
            nodeID: party.identity.nodeID.hex,
            prekeyID: party.signedPrekey.id, prekeyPrivateKey: party.prekeySeed.hexString,
            prekeyPublicKey: party.signedPrekey.publicKey.hexString, prekeySignature: party.signedPrekey.signature.hexString,
            suites: offer.map(\.description))
    }

    /// The identity payload a fixed party sends.
    static func identity(_ party: FixedParty, offer: [CipherSuite]) -> Data {
        identityPayload(party.identity, displayName: party.name, udpPort: UInt32(party.udpPort), prekey: party.signedPrekey, suites: offer)
    }

    var json: OrderedJSON {
        func party(_ p: Party) -> OrderedJSON {
            .keyed([
                "displayName": .string(p.displayName), "serviceType": .string(p.serviceType),
                "udpPort": .integer(Int64(p.udpPort)), "capabilities": .array(p.capabilities.map(OrderedJSON.string)),
                "identityPrivateKey": .string(p.identityPrivateKey), "identityPublicKey": .string(p.identityPublicKey),
                "staticPrivateKey": .string(p.staticPrivateKey), "staticPublicKey": .string(p.staticPublicKey),
                "ephemeralPrivateKey": .string(p.ephemeralPrivateKey), "ephemeralPublicKey": .string(p.ephemeralPublicKey),
                "staticSignature": .string(p.staticSignature), "nodeID": .string(p.nodeID),
                "prekeyID": .integer(Int64(p.prekeyID)), "prekeyPrivateKey": .string(p.prekeyPrivateKey),
                "prekeyPublicKey": .string(p.prekeyPublicKey), "prekeySignature": .string(p.prekeySignature),
                "suites": .array(p.suites.map(OrderedJSON.string)),
            ])
        }
        return .keyed([
            "description": .string(description),
            "protocolName": .string(protocolName),
            "prologue": .string(prologue),
            "ed25519Deterministic": .bool(ed25519Deterministic),
            "initiator": party(initiator),
            "responder": party(responder),
            "messages": .array(messages.map {
                .keyed(["name": .string($0.name), "from": .string($0.from), "payload": .string($0.payload), "frame": .string($0.frame)])
            }),
            "handshakeHash": .string(handshakeHash),
            "transport": .array(transport.map {
                .keyed([
                    "name": .string($0.name), "from": .string($0.from), "description": .string($0.description),
                    "envelope": .string($0.envelope), "frame": .string($0.frame),
                ])
            }),
            "datagramKeys": .keyed([
                "description": .string(datagramKeys.description),
                "keyI2R": .string(datagramKeys.keyI2R), "keyR2I": .string(datagramKeys.keyR2I),
                "tagI2R": .string(datagramKeys.tagI2R), "tagR2I": .string(datagramKeys.tagR2I),
            ]),
        ])
    }
}

struct VectorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Whether the vector files should be (re)written instead of only checked.
let writeVectors = ProcessInfo.processInfo.environment["MESHCHAT_WRITE_VECTORS"] == "1"

@Suite("Handshake vector", .serialized)
struct HandshakeVectorTests {
    /// The vector file of each suite.
    static func fileName(_ suite: CipherSuite) -> String {
        suite == .chaChaPoly ? "handshake" : "handshake-aesgcm"
    }

    static func load(_ suite: CipherSuite = .chaChaPoly) throws -> HandshakeVector {
        let computed = try HandshakeVector.compute(suite: suite)
        if writeVectors {
            try computed.json.rendered.write(to: try VectorFiles.url(fileName(suite)), atomically: true, encoding: .utf8)
        }
        return try VectorFiles.load(fileName(suite))
    }

    @Test("handshake.json and handshake-aesgcm.json are what the fixed handshake produces, byte for byte", arguments: CipherSuite.allCases)
    func fileMatchesHandshake(suite: CipherSuite) throws {
        let file = try Self.load(suite)
        let computed = try HandshakeVector.compute(suite: suite)
        #expect(file.protocolName == suite.noiseProtocol)
        #expect(file.initiator == computed.initiator)
        #expect(file.responder == computed.responder)
        for (recorded, fresh) in zip(file.messages, computed.messages) {
            #expect(recorded == fresh, "\(recorded.name)")
        }
        #expect(file.messages.count == 3)
        #expect(file.handshakeHash == computed.handshakeHash)
        #expect(file.transport == computed.transport)
        #expect(file.datagramKeys == computed.datagramKeys)
        #expect(file.prologue == "6d657368636861740008006d65736863686174")
        #expect(file.description == computed.description)
        #expect(file.protocolName == computed.protocolName)
        #expect(file.ed25519Deterministic)
    }

    @Test("replaying handshake.json and handshake-aesgcm.json: each machine reproduces its frames and accepts the recorded ones",
          arguments: CipherSuite.allCases)
    func replay(suite: CipherSuite) throws {
        let file = try Self.load(suite)
        func party(_ p: HandshakeVector.Party) throws -> (HandshakeStateMachine.Configuration, Curve25519.KeyAgreement.PrivateKey) {
            let signing = try Curve25519.Signing.PrivateKey(rawRepresentation: try Data(hex: p.identityPrivateKey))
            let statics = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: try Data(hex: p.staticPrivateKey))
            let ephemeral = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: try Data(hex: p.ephemeralPrivateKey))
            #expect(signing.publicKey.rawRepresentation.hexString == p.identityPublicKey)
            #expect(statics.publicKey.rawRepresentation.hexString == p.staticPublicKey)
            #expect(ephemeral.publicKey.rawRepresentation.hexString == p.ephemeralPublicKey)
            // §2.2 and §2.4, computed independently of LocalIdentity.
            #expect(Array(SHA256.hash(data: signing.publicKey.rawRepresentation)).prefix(16).hexString == p.nodeID)
            #expect(signing.publicKey.isValidSignature(
                try Data(hex: p.staticSignature), for: Data("meshchat-noise-static-key:".utf8) + statics.publicKey.rawRepresentation))
            let identity = try LocalIdentity(signingKey: signing, staticKey: statics)
            #expect(identity.staticSignature.hexString == p.staticSignature, "Ed25519 is deterministic")
            var configuration = HandshakeStateMachine.Configuration(
                identity: identity, displayName: p.displayName, serviceType: p.serviceType,
                udpPort: UInt16(p.udpPort), capabilities: p.capabilities)
            configuration.suites = p.suites.compactMap { CipherSuite(name: $0) }
            // §19.1, computed independently of SignedPrekey.
            let prekey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: try Data(hex: p.prekeyPrivateKey))
            #expect(prekey.publicKey.rawRepresentation.hexString == p.prekeyPublicKey)
            var signed = Data("meshchat-signed-prekey:".utf8)
            withUnsafeBytes(of: p.prekeyID.bigEndian) { signed.append(contentsOf: $0) }
            signed.append(prekey.publicKey.rawRepresentation)
            #expect(signing.publicKey.isValidSignature(try Data(hex: p.prekeySignature), for: signed))
            configuration.signedPrekey = try SignedPrekey(id: p.prekeyID, key: prekey, identity: signing)
            return (configuration, ephemeral)
        }
        let (aliceConfiguration, aliceEphemeral) = try party(file.initiator)
        let (bobConfiguration, bobEphemeral) = try party(file.responder)
        var initiator = try HandshakeStateMachine(role: .initiator, configuration: aliceConfiguration, ephemeralKey: aliceEphemeral)
        var responder = try HandshakeStateMachine(role: .responder, configuration: bobConfiguration, ephemeralKey: bobEphemeral)
        let recorded = try file.messages.map { parseOne(try Array(hex: $0.frame)) }
        #expect(recorded.allSatisfy { $0.type == .handshake })

        #expect(frameBytes(try #require(initiator.start().sentFrame)).hexString == file.messages[0].frame)
        #expect(frameBytes(try #require(responder.receivedFrame(recorded[0]).sentFrame)).hexString == file.messages[1].frame)
        guard case .established(var initiatorLink, let message3?) = initiator.receivedFrame(recorded[1]) else {
            Issue.record("the initiator did not accept the recorded message 2")
            return
        }
        #expect(frameBytes(message3).hexString == file.messages[2].frame)
        guard case .established(var responderLink, nil) = responder.receivedFrame(recorded[2]) else {
            Issue.record("the responder did not accept the recorded message 3")
            return
        }
        #expect(initiatorLink.peer.nodeID.hex == file.responder.nodeID)
        #expect(initiatorLink.peer.displayName == "bob")
        #expect(initiatorLink.peer.udpPort == 40002)
        #expect(responderLink.peer.nodeID.hex == file.initiator.nodeID)
        #expect(responderLink.peer.displayName == "alice")
        #expect(responderLink.peer.udpPort == 40001)
        #expect(initiatorLink.handshakeHash.hexString == file.handshakeHash)
        #expect(responderLink.handshakeHash.hexString == file.handshakeHash)
        #expect(initiatorLink.suite == suite && responderLink.suite == suite)

        // The recorded transport frames open on the other side and decode to the recorded envelopes.
        let ping = try #require(file.transport.first { $0.name == "responder_ping" })
        let chat = try #require(file.transport.first { $0.name == "initiator_chat" })
        let pingMessage = try #require(try initiatorLink.channel.open(parseOne(try Array(hex: ping.frame))))
        #expect(pingMessage.hexString == ping.envelope)
        #expect(try Envelope(decoding: pingMessage) == Envelope.ping(nonce: 0))
        let chatMessage = try #require(try responderLink.channel.open(parseOne(try Array(hex: chat.frame))))
        #expect(chatMessage.hexString == chat.envelope)
        let envelope = try Envelope(decoding: chatMessage)
        #expect(envelope.chat.messageID == HandshakeVector.chatID)
        #expect(envelope.chat.text == "hello bob")
        #expect(envelope.chat.sentAtMs == 1_700_000_000_000)

        // Keys: the initiator sends with i2r, the responder with r2i.
        let tag = { (value: UInt64) in withUnsafeBytes(of: value.bigEndian) { Array($0) }.hexString }
        #expect(bytes(of: initiatorLink.datagramKeys.sendKey).hexString == file.datagramKeys.keyI2R)
        #expect(bytes(of: responderLink.datagramKeys.sendKey).hexString == file.datagramKeys.keyR2I)
        #expect(tag(initiatorLink.datagramKeys.sendTag) == file.datagramKeys.tagI2R)
        #expect(tag(responderLink.datagramKeys.sendTag) == file.datagramKeys.tagR2I)
    }

    /// The handshake run with `NoiseHandshake` directly, with the recorded keys and payloads.
    static func rawNoise(_ file: HandshakeVector) throws -> (initiator: NoiseHandshake, responder: NoiseHandshake, frames: [String]) {
        let prologue = try Array(hex: file.prologue)
        var initiator = try NoiseHandshake(
            protocolName: file.protocolName, initiator: true, prologue: prologue,
            staticKey: try .init(rawRepresentation: try Data(hex: file.initiator.staticPrivateKey)),
            ephemeralKey: try .init(rawRepresentation: try Data(hex: file.initiator.ephemeralPrivateKey)))
        var responder = try NoiseHandshake(
            protocolName: file.protocolName, initiator: false, prologue: prologue,
            staticKey: try .init(rawRepresentation: try Data(hex: file.responder.staticPrivateKey)),
            ephemeralKey: try .init(rawRepresentation: try Data(hex: file.responder.ephemeralPrivateKey)))
        var frames: [String] = []
        for (index, message) in file.messages.enumerated() {
            let payload = try Data(hex: message.payload)
            let written: Data
            if index % 2 == 0 {
                written = try initiator.writeMessage(payload: payload)
                #expect(try responder.readMessage(written) == payload)
            } else {
                written = try responder.writeMessage(payload: payload)
                #expect(try initiator.readMessage(written) == payload)
            }
            frames.append(frameBytes(Frame(type: .handshake, body: ByteBuffer(bytes: written))).hexString)
        }
        return (initiator, responder, frames)
    }

    @Test("the recorded frames are plain Noise XX over the recorded payloads, and the payloads decode", arguments: CipherSuite.allCases)
    func plainNoise(suite: CipherSuite) throws {
        let file = try Self.load(suite)
        let (initiator, responder, frames) = try Self.rawNoise(file)
        #expect(frames == file.messages.map(\.frame))
        #expect(initiator.handshakeHash.hexString == file.handshakeHash)
        #expect(responder.handshakeHash.hexString == file.handshakeHash)

        let hello = try HelloPayload(decoding: try Data(hex: file.messages[0].payload))
        #expect(hello.protocolVersion == 8 && hello.serviceType == "meshchat")
        #expect(hello.suites == HandshakeVector.offer(suite).map { UInt32($0.rawValue) })
        #expect(hello.suite == UInt32(suite.rawValue) && hello.retryOf == 0)
        for (message, party) in [(file.messages[1], file.responder), (file.messages[2], file.initiator)] {
            let identity = try IdentityPayload(decoding: try Data(hex: message.payload))
            #expect(identity.displayName == party.displayName)
            #expect(identity.protocolVersion == 8)
            #expect(identity.signedPrekey.publicKey.hexString == party.prekeyPublicKey)
            #expect(identity.capabilities == party.capabilities)
            #expect(identity.identityKey.hexString == party.identityPublicKey)
            #expect(identity.staticSignature.hexString == party.staticSignature)
            #expect(Int(identity.udpPort) == party.udpPort)
            #expect(identity.suites.compactMap { UInt8(exactly: $0).flatMap(CipherSuite.init(rawValue:))?.description } == party.suites)
        }

        // The first transport frames are Split()'s cipher states at nonce 0 over one FIN record.
        let (i2r, r2i) = try initiator.split()
        var opener = i2r
        let chat = try #require(file.transport.first { $0.name == "initiator_chat" })
        let body = Data(try Array(hex: chat.frame).dropFirst(WireLimits.frameHeaderSize))
        #expect(try opener.decrypt(body).hexString == "01" + chat.envelope)
        var pingOpener = r2i
        let ping = try #require(file.transport.first { $0.name == "responder_ping" })
        #expect(try pingOpener.decrypt(Data(try Array(hex: ping.frame).dropFirst(5))).hexString == "01" + ping.envelope)
    }

    @Test("the datagram keys are §8.1's: HMAC-SHA256(HMAC-SHA256(ck, \"\"), label ‖ 0x01), distinct from the transport keys",
          arguments: CipherSuite.allCases)
    func datagramKeyDerivation(suite: CipherSuite) throws {
        let file = try Self.load(suite)
        let (initiator, _, _) = try Self.rawNoise(file)
        // Written out with HMAC, independently of HKDF and of MeshNoise.deriveKey.
        let tempKey = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(
            for: Data(), using: SymmetricKey(data: initiator.chainingKeyForTesting))))
        func value(_ label: String) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: Data(label.utf8) + [0x01], using: tempKey))
        }
        #expect(value("meshchat udp key i2r").hexString == file.datagramKeys.keyI2R)
        #expect(value("meshchat udp key r2i").hexString == file.datagramKeys.keyR2I)
        #expect(value("meshchat udp tag i2r").prefix(8).hexString == file.datagramKeys.tagI2R)
        #expect(value("meshchat udp tag r2i").prefix(8).hexString == file.datagramKeys.tagR2I)

        // Split()'s transport keys are HMAC(temp_key, 0x01) and HMAC(temp_key, k1 ‖ 0x02).
        let k1 = Array(HMAC<SHA256>.authenticationCode(for: [0x01], using: tempKey))
        let k2 = Array(HMAC<SHA256>.authenticationCode(for: k1 + [0x02], using: tempKey))
        let (i2r, _) = try initiator.split()
        var check = NoiseCipherState(key: SymmetricKey(data: k1), cipher: suite.cipher)
        var reference = i2r
        #expect(try check.encrypt(Data("k1".utf8)) == (try reference.encrypt(Data("k1".utf8))), "k1 is the i2r transport key")
        for key in [file.datagramKeys.keyI2R, file.datagramKeys.keyR2I] {
            #expect(key != k1.hexString && key != k2.hexString)
        }
    }
}
