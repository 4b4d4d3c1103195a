import Foundation
import Places

/// `placesprobe FILE [RUNS]`: loads one place file with ``PlaceDataSet/load(contentsOf:options:)``
/// and prints one JSON line, `{"places":N,"error":"MESSAGE","vmHWM":BYTES}` (the error empty when
/// it loaded), with this process's peak resident memory read from /proc/self/status just before
/// exit. PlacesTests runs it to measure what a load costs, in a process of its own. With RUNS, it
/// first loads the file that many times with the loader alone (``CSVLoader`` or ``GeoJSONLoader``
/// by extension, no index) and adds `"loadMs"`, the median wall time of one load.
@main
struct PlacesProbe {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 2 || (arguments.count == 3 && Int(arguments[2]) != nil) else {
            FileHandle.standardError.write(Data("usage: placesprobe FILE [RUNS]\n".utf8))
            exit(2)
        }
        let url = URL(fileURLWithPath: arguments[1])
        var loadMs: [Double] = []
        for _ in 0..<(arguments.count == 3 ? Int(arguments[2]) ?? 0 : 0) {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = url.path.contains(".geojson") ? try? GeoJSONLoader().load(contentsOf: url) : try? CSVLoader().load(contentsOf: url)
            loadMs.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        var places = 0
        var message = ""
        do {
            places = try PlaceDataSet.load(contentsOf: url).places.count
        } catch {
            message = error.message
        }
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let hwm = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { $0.split(separator: " ").compactMap { Int($0) }.first }.map { $0 * 1024 } ?? -1
        var object: [String: Any] = ["places": places, "error": message, "vmHWM": hwm]
        if !loadMs.isEmpty { object["loadMs"] = loadMs.sorted()[loadMs.count / 2] }
        let line = (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{}".utf8)
        FileHandle.standardOutput.write(line + Data("\n".utf8))
    }
}
