/// A named point on the Earth, as read from a place data set.
///
/// `name` is kept exactly as the source wrote it (leading tabs, padding and all), so a data
/// set round-trips; use ``displayName`` to show it. Coordinates are WGS84 degrees.
///
/// The other fields of the record are stored compactly: the places loaded from one file share
/// one buffer of values and one list of column (or property) names, so a place is 48 bytes
/// and allocates nothing of its own beyond a name longer than 15 bytes. ``properties`` builds
/// a dictionary when read; ``property(_:)`` looks up one value without building anything.
///
/// This type is a value and is thread-safe.
public struct Place: Sendable, Hashable {
    /// The name exactly as the source wrote it.
    public var name: String
    /// The position in degrees (latitude −90…90, longitude −180…180).
    public var coordinate: Coordinate
    var storage: PlaceProperties

    /// Creates a place.
    /// - Parameters:
    ///   - name: The name as the source wrote it.
    ///   - coordinate: The position in degrees.
    ///   - properties: Other fields of the record.
    public init(name: String, coordinate: Coordinate, properties: [String: String] = [:]) {
        self.name = name
        self.coordinate = coordinate
        storage = PlaceProperties(properties)
    }

    /// Creates a place with properties already packed by a loader.
    init(name: String, coordinate: Coordinate, properties: PlaceProperties) {
        self.name = name
        self.coordinate = coordinate
        storage = properties
    }

    /// Every other field of the source record, by column or property name.
    ///
    /// Built when read (see the type's discussion); prefer ``property(_:)`` for one value.
    /// GeoJSON numbers and booleans are written as their JSON text; nested values as compact JSON.
    public var properties: [String: String] {
        get { storage.dictionary }
        set { storage = PlaceProperties(newValue) }
    }

    /// One field of the source record.
    /// - Parameter key: The column or property name (exactly as in the file).
    /// - Returns: Its value, or nil when the record has no such field.
    public func property(_ key: String) -> String? {
        storage.value(for: key)
    }

    /// The other fields in the order the source wrote them (for a dictionary given to
    /// ``init(name:coordinate:properties:)``, sorted by key).
    public var orderedProperties: [(key: String, value: String)] {
        storage.ordered
    }

    /// The latitude in degrees.
    public var latitude: Double { coordinate.latitude }
    /// The longitude in degrees.
    public var longitude: Double { coordinate.longitude }

    /// The name with leading and trailing whitespace (tabs included) removed and inner runs of
    /// whitespace collapsed to one space, for display.
    public var displayName: String {
        name.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// Equal when name, coordinate and properties are.
    public static func == (lhs: Place, rhs: Place) -> Bool {
        lhs.name == rhs.name && lhs.coordinate == rhs.coordinate && lhs.storage == rhs.storage
    }

    /// Hashes name, coordinate and properties.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(coordinate)
        hasher.combine(storage.dictionary)
    }
}

/// A place's properties: a slot in a ``PropertyStore`` shared by the places of one load (or
/// a store of its own for a place made from a dictionary), or none.
struct PlaceProperties: Sendable, Equatable {
    let store: PropertyStore?
    let slot: UInt32

    init(store: PropertyStore?, slot: UInt32) {
        self.store = store
        self.slot = slot
    }

    init(_ dictionary: [String: String]) {
        if dictionary.isEmpty {
            self.init(store: nil, slot: 0)
        } else {
            var builder = PropertyStoreBuilder()
            let pairs = dictionary.sorted { $0.key < $1.key }
            let slot = builder.add(keys: pairs.map(\.key), values: pairs.map(\.value))
            self.init(store: builder.finish(), slot: slot)
        }
    }

    var ordered: [(key: String, value: String)] { store?.ordered(slot) ?? [] }
    var dictionary: [String: String] { store?.dictionary(slot) ?? [:] }
    func value(for key: String) -> String? { store?.value(slot, key) }

    static func == (lhs: PlaceProperties, rhs: PlaceProperties) -> Bool {
        if lhs.store === rhs.store && lhs.slot == rhs.slot { return true }
        return lhs.dictionary == rhs.dictionary
    }
}

/// The property values of many places in one buffer: per place (slot) its values joined by
/// NUL, and which list of keys they belong to. A place costs 6 bytes here plus its values,
/// and no allocation of its own.
///
/// Immutable once made by ``PropertyStoreBuilder/finish()``.
final class PropertyStore: Sendable {
    fileprivate let keySets: [[String]]
    fileprivate let bytes: [UInt8]
    /// Where each slot's values start in `bytes`; one more entry than slots.
    fileprivate let starts: [UInt32]
    /// Each slot's index in `keySets`, or `UInt16.max` for a slot kept in `dictionaries`.
    fileprivate let keySetOfSlot: [UInt16]
    /// Slots whose values could not be packed (a value holding NUL, or the buffer full).
    fileprivate let dictionaries: [UInt32: [String: String]]

    fileprivate init(keySets: [[String]], bytes: [UInt8], starts: [UInt32], keySetOfSlot: [UInt16], dictionaries: [UInt32: [String: String]]) {
        self.keySets = keySets
        self.bytes = bytes
        self.starts = starts
        self.keySetOfSlot = keySetOfSlot
        self.dictionaries = dictionaries
    }

    fileprivate func values(_ slot: UInt32) -> [String] {
        let range = Int(starts[Int(slot)])..<Int(starts[Int(slot) + 1])
        return bytes[range].split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }

    func ordered(_ slot: UInt32) -> [(key: String, value: String)] {
        let set = keySetOfSlot[Int(slot)]
        if set == .max {
            return (dictionaries[slot] ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        return zip(keySets[Int(set)], values(slot)).map { ($0, $1) }
    }

    func dictionary(_ slot: UInt32) -> [String: String] {
        let set = keySetOfSlot[Int(slot)]
        if set == .max { return dictionaries[slot] ?? [:] }
        return Dictionary(zip(keySets[Int(set)], values(slot)), uniquingKeysWith: { _, last in last })
    }

    func value(_ slot: UInt32, _ key: String) -> String? {
        let set = keySetOfSlot[Int(slot)]
        if set == .max { return dictionaries[slot]?[key] }
        guard let i = keySets[Int(set)].firstIndex(of: key) else { return nil }
        var start = Int(starts[Int(slot)])
        let end = Int(starts[Int(slot) + 1])
        for _ in 0..<i {
            guard let nul = bytes[start..<end].firstIndex(of: 0) else { return nil }
            start = nul + 1
        }
        let stop = bytes[start..<end].firstIndex(of: 0) ?? end
        return String(decoding: bytes[start..<stop], as: UTF8.self)
    }
}

/// Collects places' properties for one ``PropertyStore``: key lists are interned, values
/// appended to one buffer.
struct PropertyStoreBuilder {
    private var keySets: [[String]] = []
    private var keySetIndex: [[String]: Int] = [:]
    private var bytes: [UInt8] = []
    private var starts: [UInt32] = [0]
    private var keySetOfSlot: [UInt16] = []
    private var dictionaries: [UInt32: [String: String]] = [:]

    /// The number of slots so far.
    var count: Int { keySetOfSlot.count }

    /// The index of a key list (distinct keys), adding it when new; nil when the store holds
    /// as many lists as it can.
    mutating func keySet(_ keys: [String]) -> Int? {
        if let known = keySetIndex[keys] { return known }
        guard keySets.count < Int(UInt16.max) else { return nil }
        keySetIndex[keys] = keySets.count
        keySets.append(keys)
        return keySets.count - 1
    }

    /// Adds one place's values for distinct `keys`.
    /// - Returns: The place's slot.
    mutating func add(keys: [String], values: [String]) -> UInt32 {
        guard let set = keySet(keys), values.count == keys.count,
              let packed = pack(values.map { Array($0.utf8) }) else {
            return addDictionary(Dictionary(zip(keys, values), uniquingKeysWith: { _, last in last }))
        }
        return append(packed, set: set)
    }

    /// Adds one place's values as UTF-8 byte ranges of `source`, for the key list `set`.
    /// - Returns: The place's slot.
    mutating func add(set: Int?, keys: [String], fields: [Range<Int>], of source: [UInt8]) -> UInt32 {
        var total = max(0, fields.count - 1)
        var hasNUL = false
        for r in fields {
            total += r.count
            for j in r where source[j] == 0 { hasNUL = true }
        }
        guard let set, !hasNUL, bytes.count + total < Int(UInt32.max) else {
            let values = fields.map { String(decoding: source[$0], as: UTF8.self) }
            return addDictionary(Dictionary(zip(keys, values), uniquingKeysWith: { _, last in last }))
        }
        for (n, r) in fields.enumerated() {
            if n > 0 { bytes.append(0) }
            bytes.append(contentsOf: source[r])
        }
        return close(set: set)
    }

    private mutating func pack(_ values: [[UInt8]]) -> [UInt8]? {
        var packed: [UInt8] = []
        for (n, v) in values.enumerated() {
            if v.contains(0) { return nil }
            if n > 0 { packed.append(0) }
            packed += v
        }
        return bytes.count + packed.count < Int(UInt32.max) ? packed : nil
    }

    private mutating func append(_ packed: [UInt8], set: Int) -> UInt32 {
        bytes += packed
        return close(set: set)
    }

    private mutating func close(set: Int) -> UInt32 {
        starts.append(UInt32(bytes.count))
        keySetOfSlot.append(UInt16(set))
        return UInt32(keySetOfSlot.count - 1)
    }

    private mutating func addDictionary(_ dictionary: [String: String]) -> UInt32 {
        let slot = UInt32(keySetOfSlot.count)
        dictionaries[slot] = dictionary
        starts.append(UInt32(bytes.count))
        keySetOfSlot.append(.max)
        return slot
    }

    /// The finished store; nil when no place has properties.
    func finish() -> PropertyStore? {
        guard !keySetOfSlot.isEmpty, !(keySets.allSatisfy(\.isEmpty) && dictionaries.isEmpty) else { return nil }
        return PropertyStore(keySets: keySets, bytes: bytes, starts: starts, keySetOfSlot: keySetOfSlot, dictionaries: dictionaries)
    }
}
