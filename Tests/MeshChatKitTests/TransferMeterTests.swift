import Foundation
import MeshFiles
@testable import MeshChatKit
import MeshSession
import Testing

/// The terminal's file-transfer progress line (percentage, rate, time left), in the pure tier with virtual time.
@Suite("transfer meter")
struct TransferMeterTests {
    static let bob = try! PeerID(id: NodeID(hex: String(repeating: "01", count: 16)), displayName: "bob")
    static let mib: UInt64 = 1_048_576
    static let map = FileTransferInfo(id: FileTransferID(bytes: Data(repeating: 0x5d, count: 16))!, direction: .outgoing, peer: bob,
                                      name: "map.png", size: 50 * mib, sha256: String(repeating: "9f", count: 32))
    static let t0 = ContinuousClock.now

    @Test("one line for a transfer: percentage at once, rate and time left once half a second has passed; gone at its end")
    func oneTransfer() {
        var meter = TransferMeter()
        #expect(meter.isEmpty)
        meter.note(.offered(Self.map), at: Self.t0)
        #expect(meter.line == "map.png to bob 0%")
        meter.note(.progress(Self.map, bytes: Self.mib), at: Self.t0 + .milliseconds(100))
        #expect(meter.line == "map.png to bob 2%", "no rate from a tenth of a second")
        meter.note(.progress(Self.map, bytes: 10 * Self.mib), at: Self.t0 + .seconds(2))
        #expect(meter.line == "map.png to bob 20% 5.0 MiB/s 8 s left")
        meter.note(.paused(Self.map), at: Self.t0 + .seconds(3))
        #expect(meter.line == "map.png to bob 20% paused")
        meter.note(.resumed(Self.map), at: Self.t0 + .seconds(60))
        meter.note(.progress(Self.map, bytes: 30 * Self.mib), at: Self.t0 + .seconds(70))
        #expect(meter.line == "map.png to bob 60% 2.0 MiB/s 10 s left", "the rate starts afresh after a pause")
        meter.note(.sent(Self.map), at: Self.t0 + .seconds(80))
        #expect(meter.isEmpty && meter.line == "")
    }

    @Test("two transfers share the line; one that ends leaves the other")
    func twoTransfers() {
        var other = Self.map
        other.id = FileTransferID(bytes: Data(repeating: 0x6e, count: 16))!
        other.direction = .incoming
        other.name = "notes.txt"
        other.size = 1000
        var meter = TransferMeter()
        meter.note(.offered(Self.map), at: Self.t0)
        meter.note(.progress(other, bytes: 500), at: Self.t0)
        #expect(meter.line == "map.png to bob 0% · notes.txt from bob 50%")
        meter.note(.failed(Self.map, FileTransferFailure(.cancelled, "cancelled")), at: Self.t0)
        #expect(meter.line == "notes.txt from bob 50%")
    }

    @Test("hostile figures: more bytes than the size, an empty file, rates of nothing or near nothing")
    func hostile() {
        #expect(TransferMeter.part(Self.map, bytes: .max, bytesPerSecond: 1) == "map.png to bob 100% 1 byte/s under 1 s left")
        var empty = Self.map
        empty.size = 0
        #expect(TransferMeter.part(empty, bytes: 0, bytesPerSecond: nil) == "map.png to bob 100%")
        #expect(TransferMeter.part(Self.map, bytes: 0, bytesPerSecond: 0) == "map.png to bob 0%")
        #expect(TransferMeter.part(Self.map, bytes: 0, bytesPerSecond: .nan) == "map.png to bob 0%")
        #expect(TransferMeter.part(Self.map, bytes: 0, bytesPerSecond: 1e-300) == "map.png to bob 0% 0 bytes/s over 99 h left")
    }

    @Test("time left reads as people say it", arguments: [
        (0.2, "under 1 s left"), (12.0, "12 s left"), (185.0, "3 min 5 s left"), (7440.0, "2 h 4 min left"), (1e12, "over 99 h left"),
        (Double.infinity, "over 99 h left"),
    ])
    func timeLeft(_ seconds: Double, _ expected: String) {
        #expect(TransferMeter.timeLeft(seconds: seconds) == expected)
    }
}
