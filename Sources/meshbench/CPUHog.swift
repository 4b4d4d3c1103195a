import Foundation

/// A process that spins on one core for the `rtt_p99_64b_busy` row: `taskset -c 0` on a shell
/// loop, so that both the measured peers and the baseline share the machine with it.
final class CPUHog {
    private let process = Process()

    static func start() throws -> CPUHog {
        let hog = CPUHog()
        let pin = "/usr/bin/taskset"
        if FileManager.default.isExecutableFile(atPath: pin) {
            hog.process.executableURL = URL(fileURLWithPath: pin)
            hog.process.arguments = ["-c", "0", "/bin/sh", "-c", "while :; do :; done"]
        } else {
            hog.process.executableURL = URL(fileURLWithPath: "/bin/sh")
            hog.process.arguments = ["-c", "while :; do :; done"]
        }
        hog.process.standardOutput = FileHandle.nullDevice
        hog.process.standardError = FileHandle.nullDevice
        try hog.process.run()
        return hog
    }

    /// Kills the hog with SIGKILL: a shell started from a thread that blocks SIGTERM inherits that
    /// mask (seen under `swift test`), and would never end on `terminate()`.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
