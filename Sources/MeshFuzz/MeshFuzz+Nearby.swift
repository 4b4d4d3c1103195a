import struct Foundation.Data
import MeshSession

extension MeshFuzz {
    /// Nearby connection data (PROTOCOL.md §4.10): the bytes as the binary form and as text (after
    /// the prefix); whatever decodes re-encodes to the same bytes and survives the text round trip.
    @Sendable static func fuzzNearby(_ bytes: [UInt8]) {
        if let data = try? NearbyConnectionData(rawRepresentation: Data(bytes)) {
            precondition([UInt8](data.rawRepresentation) == bytes, "nearby data re-encodes to other bytes")
            precondition((try? NearbyConnectionData(text: data.text)) == data, "nearby data does not survive its text form")
        }
        let text = NearbyConnectionData.textPrefix + String(decoding: bytes, as: UTF8.self)
        if let data = try? NearbyConnectionData(text: text) {
            precondition((try? NearbyConnectionData(rawRepresentation: data.rawRepresentation)) == data,
                          "nearby data from text does not survive its binary form")
        }
    }
}
