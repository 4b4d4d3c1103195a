/// How a relay forwards broadcasts (ROUTING-SPEC §7).
public enum BroadcastStrategy: Sendable, Hashable {
    /// Send to every neighbour except the one the packet came from (and its origin), first copy
    /// only. About twice the number of links in transmissions per broadcast, but needs no
    /// agreement between the nodes' databases.
    case flood
    /// Forward only to the neighbours whose parent in the origin's shortest-path tree is this node,
    /// falling back to flooding while the databases may disagree. Once converged, a broadcast
    /// costs one transmission per receiving node.
    case sourceTree
}

/// The limits and timings of a ``Router`` (ROUTING-SPEC §10 lists them with their reasons).
///
/// All properties have the protocol's defaults; change them for tests or experiments.
/// ``Router/init(localNode:configuration:initialSequence:now:signAdvert:)`` traps on a value
/// outside its documented range (a programmer error, not peer input).
public struct RoutingConfiguration: Sendable, Hashable {
    /// The largest hop limit a packet may carry, and the hop limit of every advert: 32.
    public static let maxHopLimit: UInt8 = 32

    /// The hop limit of this node's broadcasts and unicasts: 7 (valid 1...32). A destination
    /// further away than this is unreachable for them.
    public var hopLimit: UInt8 = 7
    /// How relays forward broadcasts: ``BroadcastStrategy/sourceTree``.
    public var broadcastStrategy: BroadcastStrategy = .sourceTree
    /// The shortest time between two adverts of this node: 50 ms. Neighbour changes within that
    /// window go out together in one advert; the first change after a quiet period goes out at once.
    public var minAdvertInterval: Duration = .milliseconds(50)
    /// How often this node re-sends its advert when nothing changed: 30 s.
    public var advertRefreshInterval: Duration = .seconds(30)
    /// How long a received advert stays in the database without being refreshed, measured locally
    /// from its receipt: 120 s (four refresh intervals).
    public var advertLifetime: Duration = .seconds(120)
    /// How long after any topology change relays flood broadcasts instead of using source trees,
    /// because the nodes' databases may still disagree: 1 s.
    public var broadcastSettleTime: Duration = .seconds(1)
    /// The most packet ids (and advert origin/sequence pairs) remembered: 8192; the oldest goes first.
    public var duplicateCacheCapacity: Int = 8192
    /// How long a packet id is remembered: 300 s.
    public var duplicateLifetime: Duration = .seconds(300)
    /// The most origins in the link-state database: 1024. Adverts from further origins are dropped.
    public var maxNodes: Int = 1024
    /// The most neighbours an advert may list: 256. Longer adverts are dropped; this node lists
    /// at most that many of its own neighbours (the ones with the lowest latency).
    public var maxNeighborsPerAdvert: Int = 256
    /// Whether the derivation and session-relaying budgets are work-conserving (PROTOCOL.md §13.11,
    /// ``NeighborWork/isWorkConserving``): `true`. `false` makes them fixed rates, as before
    /// protocol 7's session 16 (for comparison benchmarks).
    public var workConservingBudgets = true
    /// Whether a relayed packet whose input link is at its share of the next hop's link holds that
    /// input's reads until it drains (PROTOCOL.md §13.11, `LinkWriter.relayShare`): `true`. `false`
    /// drops it when the next hop's link is above its high-water mark, as before protocol 7's session
    /// 16 (for comparison benchmarks).
    public var relayBackPressure = true

    /// Creates the default configuration.
    public init() {}

    /// A description of the first invalid value, or `nil` when all are valid.
    public var validationFailure: String? {
        if !(1...Self.maxHopLimit).contains(hopLimit) { return "hopLimit \(hopLimit) is outside 1...\(Self.maxHopLimit)" }
        if minAdvertInterval < .zero { return "minAdvertInterval \(minAdvertInterval) is negative" }
        if advertRefreshInterval <= .zero { return "advertRefreshInterval \(advertRefreshInterval) is not positive" }
        if advertLifetime <= advertRefreshInterval {
            return "advertLifetime \(advertLifetime) must exceed advertRefreshInterval \(advertRefreshInterval)"
        }
        if broadcastSettleTime < .zero { return "broadcastSettleTime \(broadcastSettleTime) is negative" }
        if duplicateCacheCapacity < 1 { return "duplicateCacheCapacity \(duplicateCacheCapacity) is below 1" }
        if duplicateLifetime <= .zero { return "duplicateLifetime \(duplicateLifetime) is not positive" }
        if maxNodes < 1 { return "maxNodes \(maxNodes) is below 1" }
        if maxNeighborsPerAdvert < 1 { return "maxNeighborsPerAdvert \(maxNeighborsPerAdvert) is below 1" }
        return nil
    }
}
