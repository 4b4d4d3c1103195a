/// A sliding window of recently seen datagram counters (PROTOCOL.md §8.4, RFC 6479 style).
///
/// Remembers the highest counter accepted and which of the ``size`` counters below it were seen.
/// Call ``wouldAccept(_:)`` before authenticating a datagram and ``record(_:)`` only after it
/// authenticated, so forged datagrams cannot move the window.
public struct ReplayWindow: Sendable, Hashable {
    /// The number of counters remembered below the highest.
    public let size: Int
    private var highest: UInt64? = nil
    private var bitmap: [UInt64]

    /// Creates an empty window.
    /// - Parameter size: counters remembered; a multiple of 64, default 1,024.
    public init(size: Int = 1024) {
        precondition(size > 0 && size % 64 == 0)
        self.size = size
        self.bitmap = Array(repeating: 0, count: size / 64)
    }

    /// Whether a datagram with this counter is new and inside the window.
    /// - Parameter counter: the datagram's counter.
    /// - Returns: `false` for a replay or a counter older than the window.
    public func wouldAccept(_ counter: UInt64) -> Bool {
        guard let highest else { return true }
        if counter > highest { return true }
        let age = highest - counter
        guard age < UInt64(size) else { return false }
        return !bit(counter)
    }

    /// Records an authenticated counter.
    /// - Parameter counter: the counter; must have passed ``wouldAccept(_:)``.
    /// - Returns: `false` (and records nothing) when the counter is a replay or too old.
    @discardableResult
    public mutating func record(_ counter: UInt64) -> Bool {
        guard wouldAccept(counter) else { return false }
        if let highest, counter > highest {
            let advance = counter - highest
            if advance >= UInt64(size) {
                for i in bitmap.indices { bitmap[i] = 0 }
            } else {
                // A closed range, so that a counter of UInt64.max does not overflow the loop.
                for c in (highest + 1)...counter { clear(c) }
            }
            self.highest = counter
        } else if highest == nil {
            self.highest = counter
        }
        set(counter)
        return true
    }

    private func slot(_ counter: UInt64) -> (Int, UInt64) {
        let index = Int((counter / 64) % UInt64(bitmap.count))
        return (index, 1 << (counter % 64))
    }
    private func bit(_ counter: UInt64) -> Bool {
        let (i, mask) = slot(counter)
        return bitmap[i] & mask != 0
    }
    private mutating func set(_ counter: UInt64) {
        let (i, mask) = slot(counter)
        bitmap[i] |= mask
    }
    private mutating func clear(_ counter: UInt64) {
        let (i, mask) = slot(counter)
        bitmap[i] &= ~mask
    }
}
