import struct Foundation.Data
import SwiftProtobuf

/// A channel message for the link's other end only (PROTOCOL.md §6.3, version 7): the generated
/// `meshchat.v1.Direct`.
public typealias DirectPayload = Meshchat_V1_Direct
/// A packet that travels across hops (PROTOCOL.md §13.1): the generated `meshchat.v1.Routed`.
public typealias RoutedPayload = Meshchat_V1_Routed
/// A body signed by its origin (§13.4).
public typealias SignedPayload = Meshchat_V1_Signed
/// A link-state advert (§13.2).
public typealias LinkStatePayload = Meshchat_V1_LinkState
/// One neighbour in a link-state advert (§13.2).
public typealias LinkStateNeighborPayload = Meshchat_V1_LinkStateNeighbor
/// A message to every node (§13.5).
public typealias BroadcastPayload = Meshchat_V1_Broadcast
/// The plaintext of a sealed packet (§13.6).
public typealias SealedPayload = Meshchat_V1_Sealed
/// A node's signed prekey (PROTOCOL.md §19.1), in adverts and handshakes.
public typealias SignedPrekeyPayload = Meshchat_V1_SignedPrekey
/// A repair: the sender could not open a message of the named session (§19.7).
public typealias SessionRepairPayload = Meshchat_V1_SessionRepair
/// A statement that a node replaced its identity key, signed by the old and the new key (§20.2).
public typealias KeyRotationPayload = Meshchat_V1_KeyRotation

/// Serialization helpers shared by the mesh payloads.
extension SwiftProtobuf.Message {
    /// The serialized message (serializing values built in Swift cannot fail).
    public var serialized: Data { try! serializedData() }

    /// Decodes a message, naming it in the error.
    /// - Parameters:
    ///   - bytes: the serialized message.
    ///   - what: the message's name for the error, e.g. "link state".
    /// - Throws: ``WireError`` `malformedMessage`.
    public init(decoding bytes: Data, what: String) throws(WireError) {
        do {
            self = try Self(serializedBytes: bytes)
        } catch {
            throw .malformedMessage(what, error)
        }
    }
}

extension Meshchat_V1_Envelope {
    /// A routed mesh packet (§13.1).
    /// - Parameter routed: the packet.
    /// - Returns: the envelope.
    public static func routed(_ routed: RoutedPayload) -> Envelope {
        var envelope = Envelope()
        envelope.body = .routed(routed)
        return envelope
    }
}

/// One message of an application channel, inside a broadcast or a sealed packet (§13.12).
public typealias ChannelMessagePayload = Meshchat_V1_ChannelMessage
/// A node's attachment for one application channel, carried in its signed advert (§13.12).
public typealias ChannelAttachmentPayload = Meshchat_V1_ChannelAttachment
