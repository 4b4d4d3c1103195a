import struct Foundation.Data
import MeshChat
import MeshSession

extension MeshFuzz {
    /// A payload on the chat's channel (§17), read as it came sealed and as it came broadcast: a
    /// decoded message re-encodes within the channel's payload limit and decodes to itself.
    @Sendable static func fuzzChat(_ bytes: [UInt8]) {
        for delivery in [ChannelMessage.Delivery.sealed, .broadcast] {
            guard let message = try? ChatPayload.decode(Data(bytes), delivery: delivery) else { continue }
            let encoded = message.encoded
            precondition(encoded.count <= Session.maxChannelPayload, "a decoded chat message re-encodes over the channel's limit")
            precondition((try? ChatPayload.decode(encoded, delivery: delivery)) == message, "a chat message does not survive re-encoding")
        }
    }
}
