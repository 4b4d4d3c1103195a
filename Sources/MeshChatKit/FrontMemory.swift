import MeshPlaces
import MeshSession
import Synchronization

/// What the front remembers between commands: the last `/near` results and `/pins` list (so
/// `/pin N` and `/unpin N` can refer to them) and the last private sender (for `/reply`).
final class FrontMemory: Sendable {
    private struct State {
        var results: [LookupResult.Hit] = []
        var pins: [SharedPin] = []
        var lastPrivateSender: PeerID?
    }

    private let state = Mutex(State())

    var lastResults: [LookupResult.Hit] {
        get { state.withLock { $0.results } }
        set { state.withLock { $0.results = newValue } }
    }

    var lastPins: [SharedPin] {
        get { state.withLock { $0.pins } }
        set { state.withLock { $0.pins = newValue } }
    }

    var lastPrivateSender: PeerID? {
        get { state.withLock { $0.lastPrivateSender } }
        set { state.withLock { $0.lastPrivateSender = newValue } }
    }
}
