import MeshPlaces
import Places
import MeshSession
import MeshStore
import Foundation
import Synchronization

/// What the front remembers between commands: the last `/near` results and `/pins` list (so
/// `/pin N` and `/unpin N` can refer to them), the last private sender (for `/reply`), the
/// room or peer typed lines go to (`nil` until read from the store), and the conversations'
/// buffers (``Conversations``).
final class FrontMemory: Sendable {
    private struct State {
        var results: [LookupResult.Hit] = []
        var lookup: PlaceLookup?
        var pins: [SharedPin] = []
        var lastPrivateSender: PeerID?
        var activeRoom: RoomRef??
        var query: PeerID??
        var conversations = Conversations()
        var presence: PresenceSummary?
        var mapRadius: Distance?
    }

    private let state = Mutex(State())

    var lastResults: [LookupResult.Hit] {
        get { state.withLock { $0.results } }
        set { state.withLock { $0.results = newValue } }
    }

    /// The last `/near` lookup, for `/near more`.
    var lastLookup: PlaceLookup? {
        get { state.withLock { $0.lookup } }
        set { state.withLock { $0.lookup = newValue } }
    }

    /// The radius of the last `/map`, to draw it again for a resized terminal.
    var lastMapRadius: Distance? {
        get { state.withLock { $0.mapRadius } }
        set { state.withLock { $0.mapRadius = newValue } }
    }

    /// The conversation looked at and its scrollback, oldest first.
    var activeScrollback: (target: ChatTarget, lines: [Conversations.Entry]) {
        state.withLock { ($0.conversations.active, $0.conversations.scrollback) }
    }

    /// Whether the last output of the conversation looked at is a `/map` picture.
    var showsMapLast: Bool { state.withLock { $0.conversations.showsMapLast } }

    /// Replaces the last `/map` picture of the conversation looked at (``Conversations/replaceLastMap(with:)``).
    func replaceLastMap(with lines: [String]) {
        state.withLock { _ = $0.conversations.replaceLastMap(with: lines) }
    }

    var lastPins: [SharedPin] {
        get { state.withLock { $0.pins } }
        set { state.withLock { $0.pins = newValue } }
    }

    var activeRoom: RoomRef?? {
        get { state.withLock { $0.activeRoom } }
        set { state.withLock { $0.activeRoom = newValue } }
    }

    var query: PeerID?? {
        get { state.withLock { $0.query } }
        set { state.withLock { $0.query = newValue } }
    }

    /// Files an output in its conversation's buffer (``Conversations/record(_:mention:at:)``).
    func record(_ output: ChatOutput, mention: Bool) -> Conversations.Placement {
        state.withLock { $0.conversations.record(output, mention: mention, at: Date()) }
    }

    /// Hands an output to the presence summary (``PresenceSummary/take(_:at:)``), made on first use.
    func takePresence(_ output: ChatOutput, mode: PresenceMode, invitesByHand: Bool, at now: ContinuousClock.Instant) -> PresenceSummary.Taken {
        state.withLock { state in
            var summary = state.presence ?? PresenceSummary(mode: mode, invitesByHand: invitesByHand)
            defer { state.presence = summary }
            return summary.take(output, at: now)
        }
    }

    /// The held presence line of an output's author, to show before it (``PresenceSummary/release(before:)``).
    func releasePresence(before output: ChatOutput) -> ChatOutput? {
        state.withLock { $0.presence?.release(before: output) }
    }

    /// Ends the presence summary's window (``PresenceSummary/flush(at:)``).
    func flushPresence(at now: ContinuousClock.Instant) -> ChatOutput? {
        state.withLock { $0.presence?.flush(at: now) }
    }

    /// Looks at a conversation; returns its scrollback.
    func select(_ target: ChatTarget) -> [Conversations.Entry] {
        state.withLock { $0.conversations.select(target) }
    }

    /// Empties the scrollback of the conversation looked at (`/clear`); returns that conversation.
    func clearScrollback() -> ChatTarget {
        state.withLock { $0.conversations.clearScrollback() }
    }

    /// Closes a conversation's buffer (a room left).
    func close(_ target: ChatTarget) {
        state.withLock { _ = $0.conversations.close(target) }
    }

    /// The conversation of a buffer number.
    func target(number: Int) -> ChatTarget? {
        state.withLock { $0.conversations.target(number: number) }
    }

    /// The buffers for the status line.
    var bufferStatus: [Conversations.BufferStatus] { state.withLock { $0.conversations.status } }

    /// The status line's text.
    var statusLine: String { state.withLock { $0.conversations.statusLine } }

    var lastPrivateSender: PeerID? {
        get { state.withLock { $0.lastPrivateSender } }
        set { state.withLock { $0.lastPrivateSender = newValue } }
    }
}
