import Foundation
import MeshSession
import MeshTestSupport
import NIOCore
import Testing

/// Nearby connection data (PROTOCOL.md §4.10): vectors, round trips and hostile input.
@Suite("NearbyConnectionData")
struct NearbyConnectionDataTests {
    struct Vectors: Decodable {
        struct Valid: Decodable {
            let name: String
            let node_id: String
            let port: Int
            let addresses: [String]
            let binary: String
            let text: String
        }
        struct Invalid: Decodable {
            let name: String
            let text: String?
            let binary: String?
            let error: String
        }
        let valid: [Valid]
        let invalid: [Invalid]
    }

    static func vectors() throws -> Vectors { try VectorFiles.load("nearby") }

    @Test("every valid vector encodes byte for byte, in binary and text, and decodes back from both")
    func validVectors() throws {
        let vectors = try Self.vectors()
        #expect(vectors.valid.count >= 4)
        for vector in vectors.valid {
            let data = try NearbyConnectionData(nodeID: try NodeID(hex: vector.node_id), port: vector.port,
                                                addresses: vector.addresses)
            #expect(data.rawRepresentation.hexString == vector.binary, "\(vector.name)")
            #expect(data.text == vector.text, "\(vector.name)")
            #expect(try NearbyConnectionData(rawRepresentation: Data(hex: vector.binary)) == data, "\(vector.name)")
            #expect(try NearbyConnectionData(text: vector.text) == data, "\(vector.name)")
            #expect(try NearbyConnectionData(text: "  \(vector.text.uppercased())\n") == data, "\(vector.name): case and whitespace")
            #expect(NearbyConnectionData.isConnectionText(vector.text))
        }
    }

    @Test("every invalid vector raises its error code")
    func invalidVectors() throws {
        let vectors = try Self.vectors()
        #expect(vectors.invalid.count >= 15)
        var codes = Set<NearbyConnectionData.DecodingError.Code>()
        for vector in vectors.invalid {
            let expected = try #require(NearbyConnectionData.DecodingError.Code(rawValue: vector.error), "\(vector.name)")
            codes.insert(expected)
            do {
                if let text = vector.text {
                    _ = try NearbyConnectionData(text: text)
                } else {
                    _ = try NearbyConnectionData(rawRepresentation: Data(hex: try #require(vector.binary)))
                }
                Issue.record("\(vector.name): decoded, expected \(vector.error)")
            } catch let error as NearbyConnectionData.DecodingError {
                #expect(error.code == expected, "\(vector.name): \(error.message)")
                #expect(!error.message.isEmpty)
            }
        }
        #expect(codes == Set(NearbyConnectionData.DecodingError.Code.allCases), "every code has a vector")
    }

    @Test("a text of two addresses is short: 64 characters")
    func short() throws {
        let data = try NearbyConnectionData(nodeID: NodeID.random(), port: 7000, addresses: ["192.168.1.23", "127.0.0.1"])
        #expect(data.text.count == 64)
    }

    @Test("parts out of range are refused when building data", arguments: [
        (0, ["127.0.0.1"], NearbyConnectionData.DecodingError.Code.invalidPort),
        (65_536, ["127.0.0.1"], .invalidPort),
        (7000, [], .invalidAddressCount),
        (7000, (1...9).map { "10.0.0.\($0)" }, .invalidAddressCount),
        (7000, ["example.org"], .invalidAddress),
        (7000, ["fe80::1%eth0"], .invalidAddress),
        (7000, ["::"], .invalidAddress),
        (7000, ["224.0.0.251"], .invalidAddress),
        (7000, ["255.255.255.255"], .invalidAddress),
    ])
    func refusedParts(port: Int, addresses: [String], code: NearbyConnectionData.DecodingError.Code) {
        do {
            _ = try NearbyConnectionData(nodeID: NodeID.random(), port: port, addresses: addresses)
            Issue.record("accepted port \(port), addresses \(addresses)")
        } catch {
            #expect(error.code == code, "\(error.message)")
        }
    }

    @Test("random bytes and random texts never trap, and whatever decodes re-encodes to the same bytes")
    func hostile() throws {
        var generator = SplitMix64(seed: 14)
        let base = try NearbyConnectionData(nodeID: NodeID.random(), port: 7000, addresses: ["192.0.2.1", "2001:db8::1", "127.0.0.1"])
        let good = [UInt8](base.rawRepresentation)
        for round in 0..<5_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...170, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = good
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] ^= UInt8.random(in: 1...255, using: &generator)
            }
            if let decoded = try? NearbyConnectionData(rawRepresentation: Data(bytes)) {
                #expect([UInt8](decoded.rawRepresentation) == bytes)
            }
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567=:1 M")
            let text = "meshchat:" + String((0..<Int.random(in: 0...80, using: &generator)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
            _ = try? NearbyConnectionData(text: text)
        }
    }
}
