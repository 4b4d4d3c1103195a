import ArgumentParser
import Foundation
import Places

/// `meshchat places …`: offline place data for scripts. `MeshChat.main()` hands the command
/// line to ``PlacesTool`` when its first argument is `places`, so the chat's own options and
/// help stay exactly as they are.
struct PlacesTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meshchat",
        abstract: "Peer-to-peer encrypted chat between Linux machines; `places` queries offline place data.",
        subcommands: [PlacesCommand.self])

    /// Whether a command line (arguments after the program name) is for this tool.
    /// - Parameter arguments: `CommandLine.arguments.dropFirst()`.
    /// - Returns: Whether the first argument is `places`.
    static func handles(_ arguments: some Collection<String>) -> Bool {
        arguments.first == "places"
    }
}

/// `meshchat places`: the place-data commands.
struct PlacesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places",
        abstract: "Query offline place data (GeoJSON, gzipped GeoJSON or CSV) without the chat.",
        subcommands: [PlacesQuery.self])
}

/// `meshchat places query`: load a data set and answer one query, as a table or JSON lines.
struct PlacesQuery: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Find places near a point, within a radius, inside a box, or by name.",
        discussion: """
            Give exactly one of --near LAT,LON (the --limit nearest places, 10 by default; with --radius, every place \
            within that distance), --bbox S,W,N,E (every place inside, west > east crosses the antimeridian), or \
            --name TEXT (prefix matches, then names containing it; case and accents are ignored; add --near to rank \
            each group by distance). Distances take m, km, mi or ft (5mi, 500m, 2.5km; a bare number is metres).

            The format comes from the content (GeoJSON starts with '{'), then the extension (.geojson, .json; \
            otherwise CSV); gzip is read either way. CSV coordinate columns are guessed from the header like \
            csv2geojson (lat/latitude, lon/lng/long/longitude) unless named; name a column by its header or as #N \
            (1-based) for files without a header (--no-header).

            Output: a table (name, distance, direction from the reference point, lat, lon), or with --json one JSON \
            object per result line: name, lat, lon, distance_m and bearing_deg (from --near, or the box's centre), \
            compass, index (0-based position in the file), dataset, properties; name searches without --near have \
            match ("prefix" or "substring") instead of distance_m and bearing_deg. Records that cannot be read are \
            listed on stderr as FILE:LINE: problem; the others are still queried.
            Exit status: 0 (also when nothing matches), 1 when the file cannot be read or is not place data, 64 for \
            a bad command line, 74 when the answer cannot be written to standard output.
            """)

    @Option(name: .long, help: ArgumentHelp("The place data set: GeoJSON (.geojson, .json), gzipped or not, or CSV.", valueName: "FILE"))
    var data: String

    @Option(name: .long, help: ArgumentHelp("CSV latitude column: header name or #N (default: guessed).", valueName: "NAME"))
    var latField: String?

    @Option(name: .long, help: ArgumentHelp("CSV longitude column: header name or #N (default: guessed).", valueName: "NAME"))
    var lonField: String?

    @Option(name: .long, help: ArgumentHelp("The name column (CSV) or property (GeoJSON) (default: name).", valueName: "NAME"))
    var nameField: String?

    @Option(name: .long, help: ArgumentHelp("CSV field separator: one ASCII character, or 'tab' (default: ',').", valueName: "CHAR"))
    var delimiter: String?

    @Flag(name: .long, help: "The CSV file has no header row (name columns as #N).")
    var noHeader = false

    // Unconditional: a value such as -33.87,151.21 starts with '-' and is still the value
    // (as for --radius and --bbox, whose errors then say what is wrong with it).
    @Option(name: .long, parsing: .unconditional,
            help: ArgumentHelp("The reference point: nearest places, or with --radius all within it.", valueName: "LAT,LON"))
    var near: String?

    @Option(name: .long, parsing: .unconditional,
            help: ArgumentHelp("With --near: every place within this distance (5mi, 500m, 2.5km, 300ft).", valueName: "DISTANCE"))
    var radius: String?

    @Option(name: .long, help: "At most this many results (default: 10 for --near alone and --name; all for --radius and --bbox).")
    var limit: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Every place inside a latitude/longitude box.", valueName: "S,W,N,E"))
    var bbox: String?

    @Option(name: .long, help: ArgumentHelp("Places whose name starts with or contains TEXT.", valueName: "TEXT"))
    var name: String?

    @Option(name: .long, help: "Units for distances in the table: metric or imperial.")
    var units: PlacesUnits = .metric

    @Flag(name: .long, help: "Print one JSON object per result line instead of a table.")
    var json = false

    /// What to ask the index, read from the options by ``validate()``.
    enum Question {
        case nearest(Coordinate, limit: Int)
        case within(Distance, of: Coordinate, limit: Int?)
        case box(BoundingBox, limit: Int?)
        case name(String, near: Coordinate?, limit: Int)
    }

    func validate() throws {
        _ = try question()
        _ = try loadOptions()
    }

    /// The question the options ask.
    /// - Throws: `ValidationError` naming the option and what is wrong with it.
    func question() throws -> Question {
        if let limit, limit < 1 {
            throw ValidationError("--limit \(limit) is not a count; use 1 or more.")
        }
        var point: Coordinate?
        if let near {
            do throws(PlacesError) {
                point = try Coordinate(parsing: near)
            } catch {
                throw ValidationError("--near: \(error.message).")
            }
        }
        if near != nil && bbox != nil {
            throw ValidationError("--near and --bbox cannot be combined: give --near LAT,LON (with --radius) or --bbox S,W,N,E.")
        }
        if name != nil && bbox != nil {
            throw ValidationError("--name and --bbox cannot be combined: give --name TEXT (with --near to rank by distance) or --bbox S,W,N,E.")
        }
        if radius != nil && (point == nil || name != nil) {
            throw ValidationError(name != nil ? "--radius cannot be combined with --name; use --near LAT,LON --radius DISTANCE."
                                              : "--radius needs --near LAT,LON.")
        }
        if let text = bbox {
            do throws(PlacesError) {
                return .box(try BoundingBox(parsing: text), limit: limit)
            } catch {
                throw ValidationError("--bbox: \(error.message).")
            }
        }
        if let name {
            guard !PlaceIndex.searchKey(for: name).isEmpty else {
                throw ValidationError("--name \"\(name)\" has nothing to search for; give some letters or digits.")
            }
            return .name(name, near: point, limit: limit ?? 10)
        }
        guard let point else {
            throw ValidationError("Give --near LAT,LON (with --radius DISTANCE), --bbox S,W,N,E or --name TEXT.")
        }
        guard let radius else { return .nearest(point, limit: limit ?? 10) }
        do throws(PlacesError) {
            return .within(try Distance(parsing: radius), of: point, limit: limit)
        } catch {
            throw ValidationError("--radius: \(error.message).")
        }
    }

    /// The loader options the column options ask for.
    /// - Throws: `ValidationError` for a bad column or separator.
    func loadOptions() throws -> PlaceDataSet.Options {
        func column(_ text: String?, _ option: String) throws -> CSVLoader.Column? {
            guard let text else { return nil }
            guard text.hasPrefix("#") else {
                if noHeader {
                    throw ValidationError("\(option) \"\(text)\" names a header column, but --no-header says there is none; use #N (1-based).")
                }
                return .named(text)
            }
            guard let n = Int(text.dropFirst()), n >= 1 else {
                throw ValidationError("\(option) \"\(text)\" is not a column number; use #1, #2, … (1-based).")
            }
            return .index(n - 1)
        }
        var csv = CSVLoader(hasHeader: !noHeader)
        if let lat = try column(latField, "--lat-field") { csv.latitude = lat }
        if let lon = try column(lonField, "--lon-field") { csv.longitude = lon }
        if let name = try column(nameField, "--name-field") { csv.name = name }
        if noHeader && (latField == nil || lonField == nil) {
            throw ValidationError("--no-header needs --lat-field #N and --lon-field #N (columns cannot be guessed without a header).")
        }
        if noHeader && nameField == nil { csv.name = nil }
        if let delimiter {
            let byte: UInt8
            switch delimiter {
            case "tab", "\\t", "\t": byte = 0x09
            default:
                guard delimiter.utf8.count == 1, let b = delimiter.utf8.first, b < 0x80, b != 0x22, b != 0x0A, b != 0x0D else {
                    throw ValidationError("--delimiter \"\(delimiter)\" is not one ASCII character (or 'tab'); quotes and line breaks cannot separate fields.")
                }
                byte = b
            }
            csv.separator = byte
        }
        var options = PlaceDataSet.Options(csv: csv)
        if let nameField, !nameField.hasPrefix("#") { options.geoJSON = GeoJSONLoader(nameProperty: nameField) }
        return options
    }

    func run() throws {
        let question = try question()
        let options = try loadOptions()
        let set: PlaceDataSet
        do throws(PlacesError) {
            set = try PlaceDataSet.load(contentsOf: URL(fileURLWithPath: data), options: options)
        } catch {
            PlacesOutput.standardError("meshchat places: \(error.message)")
            throw ExitCode(1)
        }
        PlacesOutput.reportProblems(set, path: data)
        if set.format == .geoJSON && (latField != nil || lonField != nil) {
            PlacesOutput.standardError("meshchat places: note: \(data) is GeoJSON; --lat-field and --lon-field apply to CSV only.")
        }
        let rows = PlacesOutput.rows(answering: question, in: set)
        if rows.isEmpty {
            PlacesOutput.standardError("meshchat places: no places match (\(set.summary)).")
        }
        PlacesOutput.write(json ? PlacesOutput.jsonLines(rows, dataSet: set.name) : PlacesOutput.table(rows, units: units.distanceUnits))
    }
}

/// `--units`: how distances are written in the table.
enum PlacesUnits: String, ExpressibleByArgument, CaseIterable {
    case metric
    case imperial

    var distanceUnits: Distance.Units { self == .metric ? .metric : .imperial }
}
