import Foundation

/// One line of a places table: our figure beside a baseline measured in the same run, and the
/// Python anchor figure from `bench-anchors/results-run3.json`.
struct PlacesRow {
    /// What was measured.
    var label: String
    /// The unit of every figure on the line ("q/s", "ms", "MB").
    var unit: String
    /// Our figure.
    var value: Double?
    /// The same-run baseline (`nil`: none).
    var baseline: Double?
    /// The Python anchor figure (`nil`: none or not found).
    var anchor: Double?
    /// The goal, or "—".
    var goal: String = "—"
    /// Whether a higher figure is better (rates) or a lower one (times, memory).
    var higherIsBetter = true
}

/// A Markdown table of places figures with ratios to the baseline and to the anchor.
struct PlacesTable {
    /// The title.
    var title: String
    /// What the baseline column is.
    var baselineName: String
    /// What the anchor column is.
    var anchorName: String
    /// The rows.
    var rows: [PlacesRow] = []
    /// Notes printed under the table.
    var notes: [String] = []

    /// Prints the table to stdout.
    func print() {
        var text = "\n### \(title)\n\n"
        text += "| measurement | Places | \(baselineName) | ratio | \(anchorName) | vs anchor | goal |\n"
        text += "|---|---|---|---|---|---|---|\n"
        for row in rows {
            let ratio = Self.ratio(row.value, row.baseline)
            let vsAnchor = Self.ratio(row.value, row.anchor)
            text += "| \(row.label) | \(Self.format(row.value, row.unit)) | \(Self.format(row.baseline, row.unit)) | \(ratio) "
                + "| \(Self.format(row.anchor, row.unit)) | \(vsAnchor) | \(row.goal) |\n"
        }
        if !notes.isEmpty {
            text += "\n" + notes.map { "- \($0)\n" }.joined()
        }
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func ratio(_ value: Double?, _ base: Double?) -> String {
        guard let value, let base, base > 0 else { return "—" }
        let r = value / base
        return r >= 100 ? String(format: "%.0f×", r) : r >= 10 ? String(format: "%.1f×", r) : String(format: "%.2f×", r)
    }

    /// "12.3k q/s", "4.56 ms", "—".
    static func format(_ value: Double?, _ unit: String) -> String {
        guard let value else { return "—" }
        let number: String
        if value >= 1_000_000 {
            number = String(format: "%.2fM", value / 1_000_000)
        } else if value >= 10_000 {
            number = String(format: "%.1fk", value / 1000)
        } else if value >= 100 {
            number = String(format: "%.0f", value)
        } else if value >= 10 {
            number = String(format: "%.1f", value)
        } else {
            number = String(format: "%.2f", value)
        }
        return "\(number) \(unit)"
    }
}
