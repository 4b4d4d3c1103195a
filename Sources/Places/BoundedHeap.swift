/// The best `capacity` matches seen so far, by ``PlaceMatch/precedes(_:_:)``.
///
/// A max-heap with the worst kept match at the root, so a better candidate replaces it in
/// O(log k).
struct BoundedHeap {
    let capacity: Int
    private var items: [PlaceMatch] = []

    init(capacity: Int) {
        self.capacity = capacity
        items.reserveCapacity(min(capacity, 1024))
    }

    var isFull: Bool { items.count >= capacity }

    /// The distance of the worst kept match in metres (∞ while empty).
    var worstDistance: Double { items.first?.distance.metres ?? .infinity }

    mutating func insert(_ m: PlaceMatch) {
        if items.count < capacity {
            items.append(m)
            var child = items.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard PlaceMatch.precedes(items[parent], items[child]) else { break }
                items.swapAt(parent, child)
                child = parent
            }
        } else if PlaceMatch.precedes(m, items[0]) {
            items[0] = m
            var parent = 0
            while true {
                let l = 2 * parent + 1, r = l + 1
                var worst = parent
                if l < items.count, PlaceMatch.precedes(items[worst], items[l]) { worst = l }
                if r < items.count, PlaceMatch.precedes(items[worst], items[r]) { worst = r }
                if worst == parent { break }
                items.swapAt(parent, worst)
                parent = worst
            }
        }
    }

    /// The kept matches, best first.
    func sorted() -> [PlaceMatch] { items.sorted(by: PlaceMatch.precedes) }
}
