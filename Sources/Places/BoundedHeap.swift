/// The best `capacity` hits seen so far, in result order (distance, name, index).
///
/// A max-heap with the worst kept hit at the root, so a better candidate replaces it in
/// O(log k). Names are compared (by rank) only between hits at the same distance.
struct BoundedHeap {
    let capacity: Int
    private let ranks: NameRanks
    private var items: [Hit] = []

    init(capacity: Int, ranks: NameRanks) {
        self.capacity = capacity
        self.ranks = ranks
        items.reserveCapacity(Swift.min(capacity, 1024))
    }

    var isFull: Bool { items.count >= capacity }

    /// The distance of the worst kept hit in metres (∞ while empty).
    var worstDistance: Double { items.first?.distance ?? .infinity }

    @inline(__always)
    private func before(_ a: Hit, _ b: Hit) -> Bool { ranks.precedes(a, b) }

    mutating func insert(_ m: Hit) {
        if items.count < capacity {
            items.append(m)
            var child = items.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard before(items[parent], items[child]) else { break }
                items.swapAt(parent, child)
                child = parent
            }
        } else if before(m, items[0]) {
            items[0] = m
            var parent = 0
            while true {
                let l = 2 * parent + 1, r = l + 1
                var worst = parent
                if l < items.count, before(items[worst], items[l]) { worst = l }
                if r < items.count, before(items[worst], items[r]) { worst = r }
                if worst == parent { break }
                items.swapAt(parent, worst)
                parent = worst
            }
        }
    }

    /// The kept hits, best first.
    func sorted() -> [Hit] {
        var result = items
        result.sortIntoResultOrder(ranks)
        return result
    }
}
