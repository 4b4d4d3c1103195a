import struct Foundation.Data

/// The plaintext of one transport message: flags and a fragment of a message (PROTOCOL.md §5.2).
public struct Record: Hashable, Sendable {
    /// The `FIN` flag bit: this record ends a message.
    public static let finFlag: UInt8 = 0x01

    /// Whether this record ends its message.
    public var isFinal: Bool
    /// The fragment: at most ``WireLimits/maxRecordData`` bytes.
    public var data: Data

    /// Creates a record.
    /// - Parameters:
    ///   - isFinal: whether the record ends its message.
    ///   - data: the fragment.
    public init(isFinal: Bool, data: Data) {
        self.isFinal = isFinal
        self.data = data
    }

    /// The record as transport plaintext: the flags byte, then the data.
    public var encoded: Data {
        var out = Data(capacity: 1 + data.count)
        out.append(isFinal ? Self.finFlag : 0)
        out.append(data)
        return out
    }

    /// Decodes transport plaintext.
    /// - Parameter plaintext: the decrypted body of a TRANSPORT frame.
    /// - Returns: the record; its data shares storage with `plaintext`.
    /// - Throws: ``WireError`` `malformedRecord` for an empty plaintext or reserved flag bits.
    public init(decoding plaintext: Data) throws(WireError) {
        guard let flags = plaintext.first else { throw .malformedRecord("empty record (no flags byte)") }
        guard flags & ~Self.finFlag == 0 else {
            throw .malformedRecord("record flags 0x\(String(flags, radix: 16)) use reserved bits")
        }
        self.isFinal = flags & Self.finFlag != 0
        self.data = plaintext.dropFirst()
    }
}

/// Splits serialized messages into records (PROTOCOL.md §5.2).
public enum MessageFragmenter {
    /// The records that carry `message`, each with at most `maxFragment` bytes of data; the last
    /// one has `FIN`. An empty message is one empty final record.
    /// - Parameters:
    ///   - message: a serialized `Envelope`.
    ///   - maxFragment: the largest fragment; defaults to ``WireLimits/maxRecordData``.
    /// - Returns: the records in order; their data are slices of `message` (no copies).
    public static func records(for message: Data, maxFragment: Int = WireLimits.maxRecordData) -> [Record] {
        precondition(maxFragment > 0)
        if message.isEmpty { return [Record(isFinal: true, data: Data())] }
        var records: [Record] = []
        records.reserveCapacity((message.count + maxFragment - 1) / maxFragment)
        var start = message.startIndex
        while start < message.endIndex {
            let end = message.index(start, offsetBy: maxFragment, limitedBy: message.endIndex) ?? message.endIndex
            records.append(Record(isFinal: end == message.endIndex, data: message[start..<end]))
            start = end
        }
        return records
    }
}

/// Joins records back into messages (PROTOCOL.md §5.2, §5.3).
///
/// A pure value fed one record at a time; it refuses a message as soon as its bytes pass the limit.
public struct MessageReassembler: Sendable {
    /// The largest message accepted.
    public let maxMessageSize: Int
    private var pending = Data()
    private var hasPending = false

    /// Creates a reassembler.
    /// - Parameter maxMessageSize: the largest message; defaults to ``WireLimits/maxMessageSize``.
    public init(maxMessageSize: Int = WireLimits.maxMessageSize) {
        self.maxMessageSize = maxMessageSize
    }

    /// The number of bytes of the unfinished message held so far.
    public var bufferedBytes: Int { pending.count }

    /// Adds a record.
    /// - Parameter record: the next record received.
    /// - Returns: the complete message when `record` ends one, otherwise `nil`.
    /// - Throws: ``WireError`` `messageTooLarge` when the message passes the limit.
    public mutating func append(_ record: Record) throws(WireError) -> Data? {
        let total = pending.count + record.data.count
        guard total <= maxMessageSize else {
            pending = Data()
            hasPending = false
            throw .messageTooLarge(total, maximum: maxMessageSize)
        }
        if record.isFinal && !hasPending {
            return record.data  // the common case: a one-record message, no copy
        }
        if !hasPending {
            // Room for the whole message at once (its size is in its first bytes), rather than
            // growing by doubling, which copies a 1 MiB message about twice more.
            pending = Data()
            if let size = Envelope.serializedSize(fromPrefix: record.data) {
                pending.reserveCapacity(min(max(size, record.data.count), maxMessageSize))
            }
            pending.append(record.data)
            hasPending = true
        } else {
            pending.append(record.data)
        }
        guard record.isFinal else { return nil }
        defer {
            pending = Data()
            hasPending = false
        }
        return pending
    }
}
