import Foundation
import MeshChatKit
import Places

/// What `meshchat places query` prints: results as a table or JSON lines, load problems on stderr.
enum PlacesOutput {
    /// One result, whatever the query.
    struct Row {
        var index: Int
        var place: Place
        /// Distance and bearing from the reference point; nil for a name search without one.
        var distance: Distance?
        var bearing: Double?
        /// "prefix" or "substring" for a name search without a reference point.
        var match: String?
    }

    /// The most load problems listed on stderr; the rest are counted.
    static let problemsShown = 50

    /// Answers a question with rows, best first.
    static func rows(answering question: PlacesQuery.Question, in set: PlaceDataSet) -> [Row] {
        func rows(_ matches: some Sequence<PlaceMatch>) -> [Row] {
            matches.map { Row(index: $0.index, place: $0.place, distance: $0.distance, bearing: $0.bearing) }
        }
        let index = set.index
        switch question {
        case .nearest(let point, let limit):
            return rows(index.nearest(to: point, k: limit))
        case .within(let radius, let point, let limit):
            return rows(index.within(radius, of: point).prefix(limit ?? .max))
        case .box(let box, let limit):
            return rows(index.inBox(box).prefix(limit ?? .max))
        case .name(let text, let point?, let limit):
            return rows(index.named(text, near: point, limit: limit))
        case .name(let text, nil, let limit):
            return index.named(text, limit: limit).map {
                Row(index: $0.index, place: $0.place, match: $0.kind == .prefix ? "prefix" : "substring")
            }
        }
    }

    /// Lists the records skipped while loading on stderr, `FILE:LINE: problem`.
    static func reportProblems(_ set: PlaceDataSet, path: String) {
        guard !set.problems.isEmpty else { return }
        var text = ""
        for problem in set.problems.prefix(problemsShown) {
            var location = path
            if let line = problem.line { location += ":\(line)" }
            if let feature = problem.feature { location += ": feature \(feature)" }
            text += "\(location): \(problem.message)\n"
        }
        if set.problems.count > problemsShown {
            text += "… and \(set.problems.count - problemsShown) more\n"
        }
        text += "meshchat places: skipped \(set.problems.count) of \(set.problems.count + set.places.count) records in \(path)\n"
        StandardStreams.write(text, to: STDERR_FILENO)
    }

    /// Rows as an aligned table with a header: name, distance, direction, lat, lon (or match
    /// instead of distance and direction for a name search without a reference point).
    static func table(_ rows: [Row], units: Distance.Units) -> String {
        guard !rows.isEmpty else { return "" }
        let byDistance = rows.first?.distance != nil
        let header = byDistance ? ["NAME", "DISTANCE", "DIR", "LAT", "LON"] : ["NAME", "MATCH", "LAT", "LON"]
        let body: [[String]] = rows.map { row in
            let name = row.place.displayName.isEmpty ? "(no name)" : row.place.displayName
            let lat = "\(row.place.latitude)", lon = "\(row.place.longitude)"
            if let distance = row.distance, let bearing = row.bearing {
                return [name, distance.formatted(units: units), CompassPoint(bearing: bearing).abbreviation, lat, lon]
            }
            return [name, row.match ?? "", lat, lon]
        }
        let lines = [header] + body
        let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        // Numbers are right-aligned, words left-aligned.
        let rightAligned: Set<Int> = byDistance ? [1, 3, 4] : [2, 3]
        return lines.map { cells in
            cells.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                if column == cells.count - 1 && !rightAligned.contains(column) { return cell }
                return rightAligned.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// Rows as JSON Lines: one object per result (written by the chat's JSON writer).
    static func jsonLines(_ rows: [Row], dataSet: String) -> String {
        rows.map { row in
            var fields: [(String, JSONValue)] = [
                ("name", .string(row.place.displayName)),
                ("lat", .double(row.place.latitude)),
                ("lon", .double(row.place.longitude)),
            ]
            if let distance = row.distance, let bearing = row.bearing {
                fields.append(("distance_m", .double((distance.metres * 100).rounded() / 100)))
                fields.append(("bearing_deg", .double(Geodesy.roundedBearing(bearing, fractionDigits: 2))))
                fields.append(("compass", .string(CompassPoint(bearing: bearing).abbreviation)))
            }
            if let match = row.match { fields.append(("match", .string(match))) }
            fields.append(("index", .int(row.index)))
            fields.append(("dataset", .string(dataSet)))
            fields.append(("properties", .object(row.place.orderedProperties.map { ($0.key, .string($0.value)) })))
            return JSONValue.object(fields).serialized + "\n"
        }.joined()
    }

    /// Writes text to stdout; when stdout is closed or full (`> /dev/full`, a reader that went
    /// away) says so on stderr and exits with ``ExitStatus/outputClosed``.
    static func write(_ text: String) {
        guard !StandardStreams.write(text, to: STDOUT_FILENO) else { return }
        standardError("meshchat places: cannot write the answer to standard output: \(String(cString: strerror(errno)))")
        exit(ExitStatus.outputClosed)
    }

    /// Writes a line to stderr (nothing happens when stderr is closed).
    static func standardError(_ line: String) {
        StandardStreams.write(line + "\n", to: STDERR_FILENO)
    }
}
