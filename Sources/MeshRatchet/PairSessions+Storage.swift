import Crypto
import struct Foundation.Data

extension PairSessions {
    /// The version byte of ``serialized``.
    static let storageVersion: UInt8 = 1
    /// The largest stored record read back: three sessions of at most 2,000 skipped keys each and change.
    public static let maxStoredBytes = 1 << 20

    /// The sessions as bytes, to be stored where only this node's user can read them (they hold
    /// chain keys): version 1, the count, then per session its id, the other end's static key, a
    /// flags byte (1: a prekey header follows, 2: a reservation follows), those, and the ratchet's
    /// own stored state with its length.
    public var serialized: Data {
        var writer = StateWriter()
        writer.byte(Self.storageVersion)
        writer.byte(UInt8(clamping: entries.count))
        for entry in entries {
            writer.u64(entry.id)
            writer.bytes(entry.peerStaticKey)
            writer.byte((entry.pending == nil ? 0 : 1) | (entry.reservedKey == nil ? 0 : 2))
            if let pending = entry.pending {
                writer.u32(pending.prekeyID)
                writer.bytes(pending.ephemeralKey)
                writer.bytes(pending.initiatorStaticKey)
            }
            if let key = entry.reservedKey {
                writer.bytes(key)
                writer.u32(entry.reservedThrough)
            }
            let ratchet = entry.ratchet.serialized
            writer.u32(UInt32(clamping: ratchet.count))
            writer.bytes(ratchet)
        }
        return writer.data
    }

    /// Restores sessions from ``serialized`` bytes. Each session's sending chain moves past the numbers
    /// its stored state had reserved, which may have been used before the state was stored again.
    /// - Parameters:
    ///   - data: the stored bytes (checked: a file may be damaged or edited).
    ///   - limits: the largest limits a stored session may carry (a session's own limits bound the
    ///     work one received message can cause, so an edited file must not raise them).
    /// - Throws: ``RatchetError`` `malformed`.
    public init(serialized data: Data, limits: RatchetLimits = RatchetLimits()) throws(RatchetError) {
        guard data.count <= Self.maxStoredBytes else {
            throw RatchetError(.malformed, "stored sessions of \(data.count) bytes (at most \(Self.maxStoredBytes))")
        }
        var reader = StateReader(data)
        guard try reader.byte() == Self.storageVersion else {
            throw RatchetError(.malformed, "stored sessions of an unknown version")
        }
        let count = Int(try reader.byte())
        guard count <= Self.maxSessions else {
            throw RatchetError(.malformed, "\(count) stored sessions (at most \(Self.maxSessions))")
        }
        for _ in 0..<count {
            let id = try reader.u64()
            let peerStaticKey = try reader.bytes(32)
            let flags = try reader.byte()
            guard flags & ~3 == 0 else { throw RatchetError(.malformed, "a stored session with unknown flags \(flags)") }
            var pending: PrekeyHeader?
            if flags & 1 != 0 {
                pending = PrekeyHeader(prekeyID: try reader.u32(), ephemeralKey: try reader.bytes(32),
                                       initiatorStaticKey: try reader.bytes(32))
            }
            var reservedKey: Data?
            var reservedThrough: UInt32 = 0
            if flags & 2 != 0 {
                reservedKey = try reader.bytes(32)
                reservedThrough = try reader.u32()
            }
            let length = Int(try reader.u32())
            var ratchet = try DoubleRatchet(serialized: try reader.bytes(length))
            guard ratchet.limits.maxSkip <= limits.maxSkip, ratchet.limits.maxStoredSkipped <= limits.maxStoredSkipped else {
                throw RatchetError(.malformed, "a stored session with limits above \(limits.maxSkip) / \(limits.maxStoredSkipped)")
            }
            // A reservation is at most `reservation` past the position it was made at.
            guard reservedKey == nil || reservedThrough <= ratchet.nextMessageNumber &+ Self.reservation
                    || ratchet.nextMessageNumber > UInt32.max - Self.reservation else {
                throw RatchetError(.malformed, "a stored reservation \(reservedThrough) far past message \(ratchet.nextMessageNumber)")
            }
            if let reservedKey, reservedKey == ratchet.sendingRatchetKey {
                try ratchet.skipSending(to: reservedThrough)
            }
            entries.append(Entry(id: id, ratchet: ratchet, pending: pending, peerStaticKey: peerStaticKey,
                                 reservedKey: reservedKey, reservedThrough: reservedThrough))
        }
        guard reader.remaining == 0 else {
            throw RatchetError(.malformed, "\(reader.remaining) bytes after stored sessions")
        }
    }
}
