import MeshWire

/// Receipts that could not go out because no route back to the line's sender existed yet
/// (PROTOCOL.md §17.4): held per destination and sent when a route to it appears, instead of
/// waiting for the sender's next retransmission (up to a minute later).
///
/// Bounded both ways: at most ``maxIDsPerDestination`` ids per destination (the oldest are
/// dropped; the sender's retransmission earns them a new receipt) and ``maxDestinations``
/// destinations (the one held longest is dropped). Not persisted: after a restart the sender's
/// outbox sends again and the stored line is acknowledged again.
///
/// A pure value: no I/O, no clock.
public struct PendingReceipts: Sendable {
    /// The most ids held for one destination.
    public static let maxIDsPerDestination = 1024
    /// The most destinations held at once.
    public static let maxDestinations = 256

    private var byDestination: [NodeID: [String]] = [:]
    /// Destinations in the order they were first held (for eviction).
    private var order: [NodeID] = []

    /// Creates an empty set.
    public init() {}

    /// Holds a receipt that could not be sent. An id held already is not held twice.
    /// - Parameters:
    ///   - id: the line's id.
    ///   - destination: the line's sender, where the receipt goes.
    public mutating func hold(_ id: String, for destination: NodeID) {
        if var ids = byDestination[destination] {
            guard !ids.contains(id) else { return }
            ids.append(id)
            if ids.count > Self.maxIDsPerDestination { ids.removeFirst(ids.count - Self.maxIDsPerDestination) }
            byDestination[destination] = ids
            return
        }
        if order.count >= Self.maxDestinations, let oldest = order.first {
            order.removeFirst()
            byDestination[oldest] = nil
        }
        order.append(destination)
        byDestination[destination] = [id]
    }

    /// Takes every receipt held for a destination (a route to it appeared).
    /// - Parameter destination: the node.
    /// - Returns: the ids, oldest first; nothing is held for it afterwards.
    public mutating func take(for destination: NodeID) -> [String] {
        guard let ids = byDestination.removeValue(forKey: destination) else { return [] }
        order.removeAll { $0 == destination }
        return ids
    }

    /// The ids held for a destination, oldest first.
    public func held(for destination: NodeID) -> [String] {
        byDestination[destination] ?? []
    }

    /// The destinations with receipts held, the longest held first.
    public var destinations: [NodeID] { order }
}
