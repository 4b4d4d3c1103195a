import MeshFiles

/// The running file transfers as the terminal's progress line shows them: percentage, rate and
/// time left, one part a transfer, updated in place (a value with virtual time; pure).
///
/// ``note(_:at:)`` takes every ``FileTransferEvent``: an offer starts a transfer, progress moves
/// it, a pause marks it, a resume starts its rate afresh, the end (sent, received, failed) drops
/// it. ``line`` is what the status row shows (`""` with nothing running). The rate is the bytes
/// moved since the start (or resume) over the time since then; no rate is shown before
/// ``minimumElapsed`` has passed, and no time left without a rate.
struct TransferMeter: Sendable {
    /// Time before a rate is worth showing.
    static let minimumElapsed = Duration.milliseconds(500)

    private struct Running: Sendable {
        var info: FileTransferInfo
        var since: ContinuousClock.Instant
        var bytesSince: UInt64
        var bytes: UInt64
        var now: ContinuousClock.Instant
        var paused = false
    }

    private var running: [Running] = []

    /// Takes one event.
    /// - Parameters:
    ///   - event: the transfer's event.
    ///   - now: the time now.
    mutating func note(_ event: FileTransferEvent, at now: ContinuousClock.Instant) {
        let id = FileOutput.info(event).id
        let index = running.firstIndex { $0.info.id == id }
        switch event {
        case .offered(let info):
            if index == nil { running.append(Running(info: info, since: now, bytesSince: 0, bytes: 0, now: now)) }
        case .progress(let info, let bytes):
            guard let index else {
                running.append(Running(info: info, since: now, bytesSince: bytes, bytes: bytes, now: now))
                return
            }
            running[index].bytes = bytes
            running[index].now = now
        case .paused:
            if let index { running[index].paused = true }
        case .resumed:
            guard let index else { return }
            running[index].paused = false
            running[index].since = now
            running[index].bytesSince = running[index].bytes
            running[index].now = now
        case .sent, .received, .failed:
            if let index { running.remove(at: index) }
        }
    }

    /// Whether no transfer runs.
    var isEmpty: Bool { running.isEmpty }

    /// The progress line: each running transfer's part, joined.
    var line: String {
        running.map { transfer in
            let elapsed = transfer.now - transfer.since
            let moved = transfer.bytes >= transfer.bytesSince ? transfer.bytes - transfer.bytesSince : 0
            let rate = transfer.paused || elapsed < Self.minimumElapsed ? nil : Double(moved) / Self.seconds(elapsed)
            return Self.part(transfer.info, bytes: transfer.bytes, bytesPerSecond: rate, paused: transfer.paused)
        }.joined(separator: " · ")
    }

    /// `map.png to bob 45% 3.2 MiB/s 12 s left`; `paused` instead of the rate while paused.
    static func part(_ info: FileTransferInfo, bytes: UInt64, bytesPerSecond: Double?, paused: Bool = false) -> String {
        let done = min(bytes, info.size)
        let percent = info.size == 0 ? 100 : Int(min(max((Double(done) / Double(info.size) * 100).rounded(.down), 0), 100))
        var text = "\(info.name) \(info.direction == .outgoing ? "to" : "from") \(info.peer.shownName) \(percent)%"
        if paused { return text + " paused" }
        guard let bytesPerSecond, bytesPerSecond.isFinite, bytesPerSecond > 0 else { return text }
        text += " \(FileOutput.size(bytes: bytesPerSecond))/s"
        let left = Double(info.size - done) / bytesPerSecond
        return text + " " + timeLeft(seconds: left)
    }

    /// `under 1 s left`, `12 s left`, `3 min 5 s left`, `2 h 4 min left`, `over 99 h left`.
    static func timeLeft(seconds: Double) -> String {
        guard seconds.isFinite, seconds < 99 * 3600 else { return "over 99 h left" }
        guard seconds >= 1 else { return "under 1 s left" }
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole) s left" }
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s left" }
        return "\(whole / 3600) h \(whole % 3600 / 60) min left"
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
