import Foundation
import MeshTestSupport
@testable import MeshWire
import Testing

/// Records, fragmentation and reassembly (PROTOCOL.md §5.2, §5.3).
@Suite("Records")
struct RecordTests {
    // MARK: Vectors

    @Test("valid record decodes to its flags and data and re-encodes byte for byte", arguments: try RecordVectors.load().valid)
    func validRecord(_ vector: RecordVectors.Valid) throws {
        let bytes = try Data(hex: vector.bytes)
        let record = try Record(decoding: bytes)
        #expect(record.isFinal == vector.final)
        #expect(record.data.hexString == vector.data)
        #expect(record.encoded == bytes)
        #expect(Record(isFinal: vector.final, data: try Data(hex: vector.data)).encoded.hexString == vector.bytes)
    }

    @Test("invalid record raises malformedRecord naming what is wrong", arguments: try RecordVectors.load().invalid)
    func invalidRecord(_ vector: RecordVectors.Invalid) throws {
        let bytes = try Data(hex: vector.bytes)
        let error = #expect(throws: WireError.self) { try Record(decoding: bytes) }
        #expect(error?.code.name == vector.error)
        #expect(error?.closeCode == .protocolViolation)
        for part in vector.messageContains {
            #expect(error?.description.contains(part) == true, "\"\(error?.description ?? "")\" lacks \"\(part)\"")
        }
    }

    @Test("every flags byte other than 0x00 and 0x01 is refused")
    func allReservedBits() throws {
        for flags in UInt8(2)...UInt8(255) {
            #expect(throws: WireError.self) { try Record(decoding: Data([flags, 0x55])) }
        }
        #expect(try Record(decoding: Data([0x00])).isFinal == false)
        #expect(try Record(decoding: Data([0x01])).isFinal == true)
    }

    @Test("fragmentation vector: record lengths, flags and offsets", arguments: try RecordVectors.load().fragmentation)
    func fragmentation(_ vector: RecordVectors.Fragmentation) throws {
        #expect(vector.pattern == "byte i = i mod 251")
        let message = Data(patternBytes(vector.messageLength))
        let records = MessageFragmenter.records(for: message, maxFragment: vector.maxRecordData)
        #expect(records.count == vector.records.count)
        for (record, spec) in zip(records, vector.records) {
            #expect(record.data.count == spec.length)
            #expect(record.encoded.first == spec.flags)
            #expect(record.isFinal == (spec.flags == Record.finFlag))
            #expect(record.data.startIndex - message.startIndex == spec.offset)
            #expect(record.data.first == spec.firstByte)
            #expect(record.data.last == spec.lastByte)
        }
        // The default fragment size is the protocol's (§5.2: 65,535 − 16 − 1).
        #expect(vector.maxRecordData == WireLimits.maxRecordData)
        #expect(MessageFragmenter.records(for: message).map(\.data.count) == vector.records.map(\.length))

        var reassembler = MessageReassembler()
        var out: Data?
        for record in records { out = try reassembler.append(try Record(decoding: record.encoded)) }
        #expect(out == message)
    }

    // MARK: Fragmenter and reassembler

    @Test("messages round-trip through records", arguments: [0, 1, 65_517, 65_518, 65_519, 2 * 65_518, 1_048_576 + 3])
    func roundTrip(size: Int) throws {
        var rng = SplitMix64(seed: UInt64(size))
        let message = Data(rng.bytes(size))
        let records = MessageFragmenter.records(for: message)
        #expect(records.count == max(1, (size + 65_517) / 65_518))
        #expect(records.allSatisfy { $0.data.count <= WireLimits.maxRecordData })
        #expect(records.dropLast().allSatisfy { !$0.isFinal && $0.data.count == WireLimits.maxRecordData })
        #expect(records.last?.isFinal == true)

        var reassembler = MessageReassembler()
        var result: Data?
        for (index, record) in records.enumerated() {
            // Through the wire form, as a receiver sees it.
            result = try reassembler.append(try Record(decoding: record.encoded))
            #expect((result == nil) == (index < records.count - 1))
        }
        #expect(result == message)
        #expect(reassembler.bufferedBytes == 0)
    }

    @Test("many messages in a row reassemble in order with one reassembler")
    func manyMessages() throws {
        var rng = SplitMix64(seed: 11)
        var reassembler = MessageReassembler()
        var sent: [Data] = []
        var received: [Data] = []
        for _ in 0..<200 {
            let size = Int.random(in: 0...3, using: &rng) == 0 ? Int.random(in: 60_000...200_000, using: &rng) : Int.random(in: 0...300, using: &rng)
            let message = Data(rng.bytes(size))
            sent.append(message)
            for record in MessageFragmenter.records(for: message, maxFragment: Int.random(in: 1...70_000, using: &rng)) {
                if let complete = try reassembler.append(try Record(decoding: record.encoded)) {
                    received.append(complete)
                }
            }
        }
        #expect(received.count == sent.count)
        #expect(received == sent)
    }

    @Test("empty non-final records add nothing")
    func emptyContinuations() throws {
        var reassembler = MessageReassembler()
        #expect(try reassembler.append(Record(isFinal: false, data: Data())) == nil)
        #expect(try reassembler.append(Record(isFinal: false, data: Data([1, 2]))) == nil)
        #expect(try reassembler.append(Record(isFinal: false, data: Data())) == nil)
        #expect(try reassembler.append(Record(isFinal: true, data: Data([3]))) == Data([1, 2, 3]))
        #expect(try reassembler.append(Record(isFinal: true, data: Data())) == Data())
    }

    @Test("messageTooLarge is raised by the record that passes a small maximum, then a new message works")
    func tooLargeSmallMaximum() throws {
        var reassembler = MessageReassembler(maxMessageSize: 100)
        #expect(try reassembler.append(Record(isFinal: false, data: Data(repeating: 1, count: 40))) == nil)
        #expect(try reassembler.append(Record(isFinal: false, data: Data(repeating: 2, count: 60))) == nil)
        #expect(reassembler.bufferedBytes == 100)  // exactly at the limit: still fine
        let error = #expect(throws: WireError.self) {
            try reassembler.append(Record(isFinal: false, data: Data([3])))
        }
        #expect(error?.code == .messageTooLarge)
        #expect(error?.closeCode == .messageTooLarge)
        #expect(error?.description.contains("101") == true)
        #expect(error?.description.contains("100") == true, "\(error?.description ?? "") does not name the limit")
        #expect(reassembler.bufferedBytes == 0)

        // Reset: the next message starts afresh, with none of the refused bytes.
        #expect(try reassembler.append(Record(isFinal: false, data: Data([7]))) == nil)
        #expect(try reassembler.append(Record(isFinal: true, data: Data([8, 9]))) == Data([7, 8, 9]))
        // A message of exactly the maximum passes; a single final record above it does not.
        #expect(try reassembler.append(Record(isFinal: true, data: Data(repeating: 4, count: 100)))?.count == 100)
        #expect(throws: WireError.self) { try reassembler.append(Record(isFinal: true, data: Data(repeating: 4, count: 101))) }
    }

    @Test("the 16 MiB limit: exactly 16 MiB reassembles, the record that passes it is refused")
    func tooLargeRealMaximum() throws {
        let fragment = Data(repeating: 0x5a, count: WireLimits.maxRecordData)
        let fullRecords = WireLimits.maxMessageSize / WireLimits.maxRecordData  // 256
        let remainder = WireLimits.maxMessageSize - fullRecords * WireLimits.maxRecordData
        #expect(WireLimits.maxMessageSize == 16_777_216)

        var reassembler = MessageReassembler()
        for _ in 0..<fullRecords {
            #expect(try reassembler.append(Record(isFinal: false, data: fragment)) == nil)
        }
        let exact = try reassembler.append(Record(isFinal: true, data: Data(repeating: 0x5a, count: remainder)))
        #expect(exact?.count == 16_777_216)

        for _ in 0..<fullRecords {
            _ = try reassembler.append(Record(isFinal: false, data: fragment))
        }
        #expect(reassembler.bufferedBytes == fullRecords * WireLimits.maxRecordData)
        // Not final, and the limit is passed: refused now, not at the end of the message.
        let error = #expect(throws: WireError.self) { try reassembler.append(Record(isFinal: false, data: fragment)) }
        #expect(error?.code == .messageTooLarge)
        #expect(error?.description.contains("16777216") == true)
        #expect(reassembler.bufferedBytes == 0)

        #expect(try reassembler.append(Record(isFinal: true, data: Data("after".utf8))) == Data("after".utf8))
    }

    @Test("an envelope's size is read from its first bytes, and reassembly is right whether the size is exact, short or unknown")
    func sizeHint() throws {
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        let envelope = Envelope.data(payload).encoded
        #expect(Envelope.serializedSize(fromPrefix: envelope.prefix(8)) == envelope.count)
        #expect(Envelope.serializedSize(fromPrefix: Envelope.ping(nonce: 9).encoded) == Envelope.ping(nonce: 9).encoded.count)
        #expect(Envelope.serializedSize(fromPrefix: Data([0x08, 0x01])) == nil)  // a varint field: no length
        #expect(Envelope.serializedSize(fromPrefix: Data([0x12])) == nil)        // cut before the length
        let messages = [
            envelope,                                   // exact
            envelope + Data([0x78, 0x01]),              // a field after the body: the size read is short
            Data([0x08, 0x01]) + payload,               // not length-delimited: no size
            Data([0x12, 0x01]) + payload,               // a length far below the message's size
        ]
        var reassembler = MessageReassembler()
        for message in messages {
            var result: Data?
            for record in MessageFragmenter.records(for: message) {
                #expect(result == nil)
                result = try reassembler.append(record)
            }
            #expect(result == message)
            #expect(reassembler.bufferedBytes == 0)
        }
    }
}
