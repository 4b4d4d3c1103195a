import Foundation
import MeshStore
import MeshTestSupport
import MeshCore

/// Node ids, times and helpers shared by the store tests.
enum Fixture {
    static let me = try! NodeID(hex: "0000000000000000000000000000000a")
    static let alice = try! NodeID(hex: "000000000000000000000000000000a1")
    static let bob = try! NodeID(hex: "000000000000000000000000000000b0")
    static let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    /// A distinct valid message id for `n`.
    static func id(_ n: Int) -> String {
        let digits = String(n, radix: 16)
        return String(repeating: "e", count: 32 - digits.count) + digits
    }

    static func incoming(_ n: Int, from sender: NodeID = alice, sequence: UInt64, floor: UInt64? = nil,
                         sentAt: Date = t0) -> IncomingPrivate {
        IncomingPrivate(id: id(n), from: sender, fromName: "alice", text: "message \(n)", sentAt: sentAt, hops: 2,
                        sequence: sequence, floor: floor ?? sequence)
    }

    /// Opens a store file in `directory`.
    static func open(_ directory: TemporaryDirectory, limits: StoreLimits = .init()) throws -> MessageStore {
        try MessageStore(path: directory.appending("data/messages.sqlite"), limits: limits)
    }
}
