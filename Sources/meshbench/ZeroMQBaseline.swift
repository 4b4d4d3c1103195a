import Foundation

/// The `zeromq` baseline of `meshbench suite`'s throughput and rate rows: pyzmq PUSH/PULL over
/// tcp://127.0.0.1 with the same message count and size as the meshchat row, run by
/// `scripts/bench-zmq.py` (two Python processes: `pull` binds and times from its first message to
/// its last, `push` connects and sends). scripts/bench installs pyzmq when `import zmq` fails.
///
/// When the script is not given, Python or pyzmq is missing, or a run fails, the figure is `nil`
/// (`"zeromq": null` in the JSON) with a note on stderr: the baseline never fails the suite.
struct ZeroMQBaseline {
    /// The path of `bench-zmq.py`.
    let script: String
    /// Set after the first failure, so that later rounds do not try again.
    private(set) var unavailable = false

    init(script: String) {
        self.script = script
    }

    /// One PUSH → PULL run of `count` messages of `size` bytes.
    /// - Returns: what the PULL side measured, or `nil` (noted on stderr) when it could not run.
    mutating func run(count: Int, size: Int) -> SourceResult? {
        guard !unavailable else { return nil }
        do {
            return try measure(count: count, size: size)
        } catch {
            unavailable = true
            progress("bench: no zeromq baseline (\(error)); its figures are null")
            return nil
        }
    }

    private func measure(count: Int, size: Int) throws -> SourceResult {
        let python = "/usr/bin/env"
        let pull = try Child.start(python, ["python3", script, "pull", "\(count)", "\(size)"])
        defer { pull.stop() }
        let port = try pull.readPort()
        let push = try Child.start(python, ["python3", script, "push", "\(port)", "\(count)", "\(size)"])
        push.process.waitUntilExit()
        guard push.process.terminationStatus == 0 else {
            throw Failure(description: "bench-zmq.py push exited with status \(push.process.terminationStatus)")
        }
        let result = try JSONDecoder().decode(SourceResult.self, from: Data(try pull.readLine().utf8))
        guard result.messagesReceived == nil else {
            throw Failure(description: "PULL received \(result.messagesReceived ?? 0) of \(count) messages")
        }
        return result
    }

    /// A run that did not complete.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
}
