/// How much of a place file a load will hold or read: the bounds that keep a hostile file (a
/// decompression bomb, a 100 MB string) from taking memory or time out of proportion to the places
/// it yields.
///
/// Files are read and inflated ``chunkBytes`` at a time and parsed as they arrive; only the
/// record being parsed (a CSV row, a GeoJSON feature or top-level member) is kept whole. Going
/// over a limit refuses the file with ``PlacesError/Code/tooLarge``, naming the file, and the line
/// and column where the field or record starts: a record this size is not a place somebody wrote,
/// and skipping it would mean reading on through whatever the file holds.
///
/// The defaults are far above real data: the longest field in the GeoNames, UK restaurant and
/// hotel sets (../shared/data) is 78 bytes and the longest record 214; the place count leaves room
/// for GeoNames' `allCountries` (about 12 million places, 1.6 GB of text; not tried here).
///
/// This type is a value and is thread-safe.
public struct LoadLimits: Sendable, Hashable {
    /// The longest field: a CSV field (after unquoting) or a JSON string, key or value
    /// (default 64 KiB).
    public var maxFieldBytes: Int
    /// The longest record, as bytes of text: a CSV row with its quoted line breaks, a GeoJSON
    /// feature, or a top-level member other than `features` (default 1 MiB).
    public var maxRecordBytes: Int
    /// The most text read from one file, after inflating (default 8 GiB).
    public var maxTextBytes: Int
    /// The most places one file may yield (default 20 million).
    public var maxPlaces: Int
    /// The most records one file may have skipped as problems (default 100,000).
    public var maxSkipped: Int
    /// How many bytes are read (or inflated) at a time (default 128 KiB, at most 1 GiB used); it
    /// changes no result.
    public var chunkBytes: Int

    /// The defaults.
    public static let standard = LoadLimits()

    /// Creates limits; a value below 1 counts as 1.
    /// - Parameters:
    ///   - maxFieldBytes: The longest field (default 64 KiB).
    ///   - maxRecordBytes: The longest record (default 1 MiB).
    ///   - maxTextBytes: The most text read from one file, after inflating (default 8 GiB).
    ///   - maxPlaces: The most places from one file (default 20 million).
    ///   - maxSkipped: The most records skipped in one file (default 100,000).
    ///   - chunkBytes: How many bytes are read at a time (default 128 KiB).
    public init(
        maxFieldBytes: Int = 64 << 10,
        maxRecordBytes: Int = 1 << 20,
        maxTextBytes: Int = 8 << 30,
        maxPlaces: Int = 20_000_000,
        maxSkipped: Int = 100_000,
        chunkBytes: Int = 128 << 10
    ) {
        self.maxFieldBytes = max(1, maxFieldBytes)
        self.maxRecordBytes = max(1, maxRecordBytes)
        self.maxTextBytes = max(1, maxTextBytes)
        self.maxPlaces = max(1, maxPlaces)
        self.maxSkipped = max(1, maxSkipped)
        self.chunkBytes = max(1, chunkBytes)
    }

    /// The refusal for a field over ``maxFieldBytes`` (the caller adds where it starts).
    func fieldTooLarge(_ what: String) -> PlacesError {
        .tooLarge("\(what) is longer than \(maxFieldBytes) bytes (the limit for one field)")
    }

    /// The refusal for a record over ``maxRecordBytes`` (the caller adds where it starts).
    func recordTooLarge(_ what: String) -> PlacesError {
        .tooLarge("\(what) is longer than \(maxRecordBytes) bytes (the limit for one record)")
    }

    /// The refusal for more places than ``maxPlaces``.
    var tooManyPlaces: PlacesError { .tooLarge("more than \(maxPlaces) places (the limit for one file)") }

    /// The refusal for more skipped records than ``maxSkipped``.
    var tooManySkipped: PlacesError { .tooLarge("more than \(maxSkipped) records skipped (the limit for one file)") }
}
