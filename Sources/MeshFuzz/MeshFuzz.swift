/// Fuzz entry points for every decoder of outside input (scripts/README.md "Fuzzing").
///
/// Each target takes arbitrary bytes, decodes them as the node would decode them from the network,
/// a TXT record, a file, a configuration or a typed line, and, where there is an encoder, checks
/// the invariants valid input must keep (a decoded value re-encodes and decodes to itself). A
/// target never traps on any input; a broken invariant is a `precondition` failure, so that the
/// fuzzer reports it as a crash. `scripts/fuzz` drives them under libFuzzer (the `meshfuzz`
/// executable), and `MeshFuzzTests` feeds them every input kept in `Tests/FuzzCorpus/<target>/`.
public enum MeshFuzz {
    /// One fuzz target: a decoder and what it decodes.
    public struct Target: Sendable {
        /// The name `scripts/fuzz` and the corpus directory use.
        public let name: String
        /// What the input is decoded as.
        public let summary: String
        /// Decodes one input; never traps unless an invariant is broken.
        public let run: @Sendable ([UInt8]) -> Void
    }

    /// Every target, in `scripts/fuzz`'s order.
    public static let targets: [Target] = [
        Target(name: "frame", summary: "link frames from a TCP stream (§4), and ABORT bodies", run: fuzzFrame),
        Target(name: "record", summary: "records and their reassembly into messages (§5)", run: fuzzRecord),
        Target(name: "envelope", summary: "the protobuf envelope of a message (§6)", run: fuzzEnvelope),
        Target(name: "datagram", summary: "UDP datagram headers (§8) and the replay window", run: fuzzDatagram),
        Target(name: "handshake", summary: "handshake payloads and a responder's message 1 (§3)", run: fuzzHandshake),
        Target(name: "routed", summary: "routed packets from a neighbour, unsigned (§13.1)", run: fuzzRouted),
        Target(name: "advert", summary: "link-state adverts, validly signed (§13.2)", run: fuzzAdvert),
        Target(name: "sealed", summary: "sealed contents to this node in prekey and session messages (§13.6, §19.6), and raw sealed bytes", run: fuzzSealed),
        Target(name: "places", summary: "places messages: lookups, answers, pins, catch-ups (§14)", run: fuzzPlaces),
        Target(name: "pins", summary: "one pin (§14.4), round-tripped", run: fuzzPins),
        Target(name: "files", summary: "resource messages against both state machines, fresh and restored (§16)", run: fuzzFiles),
        Target(name: "chat", summary: "chat channel payloads: lines, private lines, receipts (§17), round-tripped", run: fuzzChat),
        Target(name: "streams", summary: "stream packets against an opener and a reader (§18), round-tripped", run: fuzzStreams),
        Target(name: "ratchet", summary: "end-to-end ratchet messages to a live session and stored states (§19)", run: fuzzRatchet),
        Target(name: "ratchetpacket", summary: "sealed ratchet packets (§19.6) to a node with and without a session", run: fuzzRatchetPacket),
        Target(name: "trust", summary: "stored name books (§20.3), restored, observed and bounded", run: fuzzTrust),
        Target(name: "rooms", summary: "room lines and room names (§15)", run: fuzzRooms),
        Target(name: "txt", summary: "DNS-SD TXT records (§12), round-tripped", run: fuzzTXT),
        Target(name: "nearby", summary: "nearby connection data (§4.10), binary and text, round-tripped", run: fuzzNearby),
        Target(name: "config", summary: "the TOML configuration file", run: fuzzConfig),
        Target(name: "command", summary: "typed lines: commands, host:port, distances, coordinates, boxes", run: fuzzCommand),
        Target(name: "control", summary: "requests on the chat's control socket, as lines", run: fuzzControl),
        Target(name: "keys", summary: "terminal key bytes", run: fuzzKeys),
        Target(name: "placedata", summary: "place data files: GeoJSON, CSV, TSV, gzip", run: fuzzPlaceData),
    ]

    /// The target with this name, if any.
    /// - Parameter name: a name from ``targets``.
    /// - Returns: the target.
    public static func target(named name: String) -> Target? { targets.first { $0.name == name } }
}
