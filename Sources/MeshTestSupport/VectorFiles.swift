import Foundation

/// Finds and loads the golden vectors in `Protocol/vectors/` (PROTOCOL.md §11).
///
/// The package root is found by walking up from the calling test file (`#filePath`) to the first
/// directory that holds a `Package.swift`, so the vectors are read from the source tree without
/// bundling them as resources.
public enum VectorFiles {
    /// An error locating or reading a vector file.
    public struct LoadError: Error, CustomStringConvertible {
        /// What went wrong, naming the path.
        public let description: String
    }

    /// The package root: the nearest ancestor directory of `filePath` that contains `Package.swift`.
    /// - Parameter filePath: a file inside the package; pass `#filePath` (the default).
    /// - Returns: the root directory.
    /// - Throws: ``LoadError`` when no ancestor holds a `Package.swift`.
    public static func packageRoot(from filePath: String = #filePath) throws -> URL {
        var directory = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while true {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
            let parent = directory.deletingLastPathComponent()
            if parent.path == directory.path {
                throw LoadError(description: "no Package.swift above \(filePath)")
            }
            directory = parent
        }
    }

    /// The URL of `Protocol/vectors/NAME.json`.
    /// - Parameters:
    ///   - name: the file name without `.json`, e.g. `frames`.
    ///   - filePath: a file inside the package; pass `#filePath` (the default).
    /// - Returns: the file's URL (the file may not exist).
    /// - Throws: ``LoadError`` when the package root is not found.
    public static func url(_ name: String, filePath: String = #filePath) throws -> URL {
        try packageRoot(from: filePath)
            .appendingPathComponent("Protocol")
            .appendingPathComponent("vectors")
            .appendingPathComponent("\(name).json")
    }

    /// The raw bytes of `Protocol/vectors/NAME.json`.
    /// - Parameters:
    ///   - name: the file name without `.json`, e.g. `frames`.
    ///   - filePath: a file inside the package; pass `#filePath` (the default).
    /// - Returns: the file's contents.
    /// - Throws: ``LoadError`` when the file is missing or unreadable.
    public static func data(_ name: String, filePath: String = #filePath) throws -> Data {
        let url = try url(name, filePath: filePath)
        do {
            return try Data(contentsOf: url)
        } catch {
            throw LoadError(description: "cannot read \(url.path): \(error)")
        }
    }

    /// Decodes `Protocol/vectors/NAME.json` into `type` with `JSONDecoder`.
    /// - Parameters:
    ///   - name: the file name without `.json`, e.g. `frames`.
    ///   - type: the `Decodable` shape of the file.
    ///   - filePath: a file inside the package; pass `#filePath` (the default).
    /// - Returns: the decoded value.
    /// - Throws: ``LoadError`` for a missing file, or the `DecodingError` for a file of another shape.
    public static func load<T: Decodable>(_ name: String, as type: T.Type = T.self, filePath: String = #filePath) throws -> T {
        try JSONDecoder().decode(T.self, from: data(name, filePath: filePath))
    }
}
