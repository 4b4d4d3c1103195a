import Foundation
import MeshFuzz
import Testing

/// Every input kept in `Tests/FuzzCorpus/<target>/` (seeds, and everything `scripts/fuzz` ever
/// found) fed to its fuzz entry point: none may trap or break an invariant. A crash here is a
/// regression of a fixed bug.
@Suite("fuzz corpus")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("FuzzCorpus")

    static func inputs(_ target: String) throws -> [URL] {
        let directory = corpus.appendingPathComponent(target)
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test("every corpus input runs through its target", arguments: MeshFuzz.targets.map(\.name))
    func corpus(_ name: String) throws {
        let target = try #require(MeshFuzz.target(named: name))
        let inputs = try Self.inputs(name)
        #expect(!inputs.isEmpty, "Tests/FuzzCorpus/\(name) has no inputs")
        for input in inputs { target.run(Array(try Data(contentsOf: input))) }
    }

    @Test("every corpus directory belongs to a target")
    func noStrayDirectories() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).filter { !$0.hasPrefix(".") }
        #expect(Set(names).subtracting(MeshFuzz.targets.map(\.name)).isEmpty)
    }
}
