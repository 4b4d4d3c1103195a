import MeshChat
import MeshSession
import Testing

private func node(_ byte: UInt8) throws -> NodeID {
    try NodeID(bytes: [UInt8](repeating: byte, count: 16))
}

@Suite("PendingReceipts")
struct PendingReceiptsTests {
    @Test("held receipts come out once, oldest first, when the destination's route appears")
    func takeOnce() throws {
        var pending = PendingReceipts()
        let alice = try node(1), bob = try node(2)
        pending.hold("a1", for: alice)
        pending.hold("b1", for: bob)
        pending.hold("a2", for: alice)
        pending.hold("a1", for: alice)    // a retransmission acknowledged again: held once
        #expect(pending.destinations == [alice, bob])
        #expect(pending.take(for: alice) == ["a1", "a2"])
        #expect(pending.take(for: alice) == [])
        #expect(pending.destinations == [bob])
        #expect(pending.held(for: bob) == ["b1"])
    }

    @Test("at most maxIDsPerDestination ids per destination: the oldest are dropped")
    func boundedPerDestination() throws {
        var pending = PendingReceipts()
        let alice = try node(1)
        let count = PendingReceipts.maxIDsPerDestination + 10
        for index in 0..<count { pending.hold("id\(index)", for: alice) }
        let held = pending.held(for: alice)
        #expect(held.count == PendingReceipts.maxIDsPerDestination)
        #expect(held.first == "id10")
        #expect(held.last == "id\(count - 1)")
    }

    @Test("at most maxDestinations destinations: the one held longest is dropped")
    func boundedDestinations() throws {
        var pending = PendingReceipts()
        var nodes: [NodeID] = []
        for index in 0...PendingReceipts.maxDestinations {
            let destination = try NodeID(bytes: [UInt8](repeating: 0, count: 14) + [UInt8(index >> 8), UInt8(index & 0xff)])
            nodes.append(destination)
            pending.hold("x", for: destination)
        }
        #expect(pending.destinations.count == PendingReceipts.maxDestinations)
        #expect(pending.held(for: nodes[0]).isEmpty)
        #expect(pending.held(for: nodes[1]) == ["x"])
        #expect(pending.destinations.last == nodes.last)
    }
}
