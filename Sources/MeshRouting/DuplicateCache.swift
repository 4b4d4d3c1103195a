import MeshWire

/// What the duplicate cache remembers: a packet id, or an advert's origin and sequence.
enum DuplicateKey: Hashable, Sendable {
    case packet(PacketID)
    case advert(NodeID, UInt64)
}

/// A bounded set of recently seen keys (ROUTING-SPEC §7.3): at most `capacity` entries, each
/// forgotten `lifetime` after it was inserted; when full, the oldest goes first.
///
/// Entries are kept in insertion order, which is also time order, so both rules evict from the
/// front of one queue.
struct DuplicateCache: Sendable {
    let capacity: Int
    let lifetime: Duration
    private var insertedAt: [DuplicateKey: RouterInstant] = [:]
    private var order: [(key: DuplicateKey, at: RouterInstant)] = []
    private var head = 0

    init(capacity: Int, lifetime: Duration) {
        self.capacity = capacity
        self.lifetime = lifetime
    }

    /// The number of remembered keys.
    var count: Int { insertedAt.count }

    /// Whether `key` was seen within the lifetime.
    func contains(_ key: DuplicateKey, now: RouterInstant) -> Bool {
        guard let at = insertedAt[key] else { return false }
        return now < at + lifetime
    }

    /// Remembers `key`.
    /// - Returns: `true` when it was new (not seen within the lifetime).
    mutating func insert(_ key: DuplicateKey, now: RouterInstant) -> Bool {
        expire(now: now)
        if insertedAt[key] != nil { return false }
        insertedAt[key] = now
        order.append((key, now))
        while insertedAt.count > capacity { popOldest() }
        return true
    }

    /// Forgets the keys older than the lifetime.
    mutating func expire(now: RouterInstant) {
        while head < order.count, order[head].at + lifetime <= now { popOldest() }
    }

    private mutating func popOldest() {
        insertedAt[order[head].key] = nil
        head += 1
        if head >= 1024, head * 2 >= order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
