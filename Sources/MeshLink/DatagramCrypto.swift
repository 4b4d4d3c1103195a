import Crypto
import struct Foundation.Data
import protocol Foundation.DataProtocol
import MeshNoise
import MeshWire
import NIOCore

/// The keys and tags for a link's unreliable datagrams (PROTOCOL.md §8.1), oriented for this side.
public struct DatagramKeys: Sendable {
    /// Encrypts datagrams this side sends.
    public let sendKey: SymmetricKey
    /// Decrypts datagrams the peer sends.
    public let receiveKey: SymmetricKey
    /// The tag this side writes into its datagrams (the peer's receive tag).
    public let sendTag: UInt64
    /// The tag of datagrams addressed to this side on this link.
    public let receiveTag: UInt64
    /// The AEAD of the link's suite (§4.11), which seals its datagrams too.
    public let cipher: NoiseCipher

    /// Derives the keys from a completed handshake (§8.1).
    /// - Parameters:
    ///   - handshake: the completed Noise handshake.
    ///   - role: this side's role.
    /// - Throws: `NoiseError` when the handshake is not complete.
    public init(handshake: NoiseHandshake, role: HandshakeStateMachine.Role) throws {
        let i2r = try handshake.deriveKey(label: "meshchat udp key i2r")
        let r2i = try handshake.deriveKey(label: "meshchat udp key r2i")
        let tagI2R = Self.tag(try handshake.deriveKey(label: "meshchat udp tag i2r"))
        let tagR2I = Self.tag(try handshake.deriveKey(label: "meshchat udp tag r2i"))
        let cipher = handshake.protocolName.cipher
        switch role {
        case .initiator:
            self.init(sendKey: i2r, receiveKey: r2i, sendTag: tagI2R, receiveTag: tagR2I, cipher: cipher)
        case .responder:
            self.init(sendKey: r2i, receiveKey: i2r, sendTag: tagR2I, receiveTag: tagI2R, cipher: cipher)
        }
    }

    /// Creates keys directly (tests and vectors).
    /// - Parameters:
    ///   - sendKey: the sending key.
    ///   - receiveKey: the receiving key.
    ///   - sendTag: the tag written into sent datagrams.
    ///   - receiveTag: the tag of datagrams for this side.
    ///   - cipher: the AEAD; ChaChaPoly unless given.
    public init(sendKey: SymmetricKey, receiveKey: SymmetricKey, sendTag: UInt64, receiveTag: UInt64, cipher: NoiseCipher = .chaChaPoly) {
        self.sendKey = sendKey
        self.receiveKey = receiveKey
        self.sendTag = sendTag
        self.receiveTag = receiveTag
        self.cipher = cipher
    }

    private static func tag(_ key: SymmetricKey) -> UInt64 {
        key.withUnsafeBytes { bytes in bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
    }
}

/// Seals outgoing datagrams of one link (PROTOCOL.md §8.2): header, counter, box of the link's suite.
public struct DatagramSealer: Sendable {
    private let cipher: NoiseCipherState
    private let tag: UInt64
    /// The counter the next datagram will carry.
    public private(set) var counter: UInt64 = 0

    /// Creates a sealer.
    /// - Parameter keys: the link's datagram keys.
    public init(keys: DatagramKeys) {
        self.cipher = NoiseCipherState(key: keys.sendKey, cipher: keys.cipher)
        self.tag = keys.sendTag
    }

    /// Seals one unreliable payload into a datagram.
    /// - Parameters:
    ///   - payload: at most ``WireLimits/maxUnreliablePayload`` bytes.
    ///   - buffer: the datagram is appended here.
    /// - Throws: ``LinkCloseReason`` for an oversized payload or an exhausted counter.
    public mutating func seal(_ payload: some DataProtocol, into buffer: inout ByteBuffer) throws(LinkCloseReason) {
        guard payload.count <= WireLimits.maxUnreliablePayload else {
            throw LinkCloseReason(.messageTooLarge,
                "unreliable payload of \(payload.count) bytes exceeds the maximum \(WireLimits.maxUnreliablePayload)")
        }
        guard counter < UInt64.max else {
            throw LinkCloseReason(.normal, "the datagram counter is exhausted")
        }
        let header = DatagramHeader(tag: tag, counter: counter)
        let ad = header.encoded
        var plaintext = Data(capacity: payload.count + 1)
        plaintext.append(DatagramHeader.applicationDataKind)
        plaintext.append(contentsOf: payload)
        let box: Data
        do {
            box = try cipher.encrypt(plaintext, nonce: counter, authenticating: ad)
        } catch {
            throw LinkCloseReason(.protocolViolation, "could not seal a datagram: \(error)")
        }
        counter += 1
        buffer.writeBytes(ad)
        buffer.writeBytes(box)
    }
}

/// Opens incoming datagrams of one link, dropping replays (PROTOCOL.md §8.2, §8.4).
public struct DatagramOpener: Sendable {
    private let cipher: NoiseCipherState
    /// The receive tag of this link.
    public let tag: UInt64
    private var window = ReplayWindow(size: WireLimits.replayWindowSize)

    /// Why a datagram was dropped.
    public enum Drop: Error, Sendable, Hashable {
        /// A counter seen before or older than the window.
        case replayed
        /// The box failed to authenticate.
        case unauthenticated
        /// The plaintext kind is unknown.
        case unknownKind
    }

    /// Creates an opener.
    /// - Parameter keys: the link's datagram keys.
    public init(keys: DatagramKeys) {
        self.cipher = NoiseCipherState(key: keys.receiveKey, cipher: keys.cipher)
        self.tag = keys.receiveTag
    }

    /// Opens a datagram whose header was already decoded (and whose tag matched ``tag``).
    /// - Parameters:
    ///   - header: the decoded header.
    ///   - box: the rest of the datagram after the header.
    /// - Returns: the payload.
    /// - Throws: ``Drop`` saying why the datagram was dropped.
    public mutating func open(header: DatagramHeader, box: ByteBuffer) throws(Drop) -> Data {
        guard window.wouldAccept(header.counter) else { throw .replayed }
        let plaintext: Data
        do {
            plaintext = try cipher.decrypt(Data(box.readableBytesView), nonce: header.counter, authenticating: header.encoded)
        } catch {
            throw .unauthenticated
        }
        window.record(header.counter)
        guard plaintext.first == DatagramHeader.applicationDataKind else { throw .unknownKind }
        return plaintext.dropFirst()
    }
}
