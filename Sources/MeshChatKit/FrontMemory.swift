import MeshPlaces
import MeshSession
import MeshStore
import Synchronization

/// What the front remembers between commands: the last `/near` results and `/pins` list (so
/// `/pin N` and `/unpin N` can refer to them), the last private sender (for `/reply`) and the
/// room typed lines go to (`nil` until read from the store).
final class FrontMemory: Sendable {
    private struct State {
        var results: [LookupResult.Hit] = []
        var pins: [SharedPin] = []
        var lastPrivateSender: PeerID?
        var activeRoom: RoomRef??
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

    var activeRoom: RoomRef?? {
        get { state.withLock { $0.activeRoom } }
        set { state.withLock { $0.activeRoom = newValue } }
    }

    var lastPrivateSender: PeerID? {
        get { state.withLock { $0.lastPrivateSender } }
        set { state.withLock { $0.lastPrivateSender = newValue } }
    }
}
