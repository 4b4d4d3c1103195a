// The libFuzzer driver for the MeshFuzz entry points. Built only by scripts/fuzz (with
// MESHCHAT_FUZZ=1 and `--sanitize=fuzzer`, which links libFuzzer's `main`); the target is named
// by MESHFUZZ_TARGET (see `MeshFuzz.targets`).
import Foundation
import MeshFuzz

private let target: MeshFuzz.Target = {
    let name = ProcessInfo.processInfo.environment["MESHFUZZ_TARGET"] ?? ""
    guard let target = MeshFuzz.target(named: name) else {
        let names = MeshFuzz.targets.map(\.name).joined(separator: " ")
        FileHandle.standardError.write(Data("meshfuzz: set MESHFUZZ_TARGET to one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

/// libFuzzer's entry point: one input to the selected target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = count > 0 && start != nil ? Array(UnsafeRawBufferPointer(start: start, count: count)) : []
    target.run(bytes)
    return 0
}
