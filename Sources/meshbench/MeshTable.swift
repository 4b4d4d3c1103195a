import Foundation

/// One line of the mesh table: a meshchat figure beside a baseline measured in the same run.
struct MeshRow {
    /// What was measured.
    var label: String
    /// The unit of both figures.
    var unit: String
    /// The meshchat figure (`nil`: not measured).
    var value: Double?
    /// The baseline figure (`nil`: none).
    var baseline: Double?
    /// The goal, or "—".
    var goal: String

    /// Creates a row.
    init(_ label: String, _ unit: String, _ value: Double?, _ baseline: Double?, goal: String = "—") {
        self.label = label
        self.unit = unit
        self.value = value
        self.baseline = baseline
        self.goal = goal
    }
}

/// The table of one mesh figure: rows, the baseline's name and notes, printed as Markdown.
struct MeshTable {
    /// The figure's title.
    var title: String
    /// What the meshchat column is.
    var subject: String
    /// What the baseline column is.
    var baselineName: String
    /// The rows.
    var rows: [MeshRow]
    /// Notes printed under the table.
    var notes: [String] = []

    /// Prints the table to stdout, unbuffered (the figures run for minutes).
    func print() {
        var text = ""
        Swift.print("", to: &text)
        Swift.print("### \(title)", to: &text)
        Swift.print("", to: &text)
        Swift.print("| measurement | \(subject) | \(baselineName) | ratio | goal |", to: &text)
        Swift.print("|---|---|---|---|---|", to: &text)
        for row in rows {
            let ratio: String
            if let value = row.value, let baseline = row.baseline, baseline != 0 {
                ratio = String(format: "%.2f×", value / baseline)
            } else {
                ratio = "—"
            }
            Swift.print("| \(row.label) | \(Self.format(row.value, row.unit)) | \(Self.format(row.baseline, row.unit)) | \(ratio) | \(row.goal) |", to: &text)
        }
        if !notes.isEmpty {
            Swift.print("", to: &text)
            for note in notes { Swift.print("- \(note)", to: &text) }
        }
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// A value with its unit; "—" for none.
    static func format(_ value: Double?, _ unit: String) -> String {
        guard let value else { return "—" }
        let magnitude = abs(value)
        let number: String
        if magnitude >= 100 || value == value.rounded() && magnitude < 1e6 {
            number = String(format: "%.0f", value)
        } else if magnitude >= 10 {
            number = String(format: "%.1f", value)
        } else {
            number = String(format: "%.2f", value)
        }
        return unit.isEmpty ? number : "\(number) \(unit)"
    }
}

/// The median (the mean of the middle two for an even count); 0 for none.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Writes a progress line to stderr.
func progress(_ line: String) {
    FileHandle.standardError.write(Data("bench: \(line)\n".utf8))
}
