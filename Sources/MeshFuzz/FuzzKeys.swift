import Crypto
import struct Foundation.Data
import struct Foundation.Date
import Logging
import MeshLink
import MeshPlaces
import MeshRouting
import MeshSession
import MeshWire
import Places

/// Fixed keys and fixtures, so that every run of an input does the same thing.
enum FuzzKeys {
    /// An identity from fixed key bytes.
    static func identity(_ seed: UInt8) -> LocalIdentity {
        let signing = try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: seed, count: 32))
        let agreement = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: seed &+ 1, count: 32))
        return try! LocalIdentity(signingKey: signing, staticKey: agreement)
    }

    /// The node under test.
    static let me = try! LocalPeer(displayName: "me", identity: identity(1))
    /// Its neighbour, which sends the hostile packets.
    static let neighbour = try! LocalPeer(displayName: "mallory", identity: identity(3))
    /// A node behind the neighbour.
    static let far = try! LocalPeer(displayName: "carol", identity: identity(5))

    /// A handshake configuration for ``me``.
    static let handshake = HandshakeStateMachine.Configuration(identity: me.identity, displayName: "me")

    /// A logger that drops everything (logging every refused input would be most of the work).
    static let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

    /// A fresh node for ``me`` with ``neighbour`` linked (its static key known from the handshake).
    static func node() -> MeshNode {
        let node = MeshNode(peer: me, configuration: RoutingConfiguration(), logger: logger)
        _ = node.neighborUp(neighbour.peerID, staticKey: neighbour.identity.staticKey.publicKey.rawRepresentation, latency: nil)
        return node
    }

    /// The time now in Unix milliseconds.
    static var nowMilliseconds: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// A small data set around Charing Cross, London (the integration tests' fixture).
    static let places: LocalPlaces = {
        let geoJSON = """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1280,51.5080]},"properties":{"name":"Pizza Express"}},
            {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1200,51.5100]},"properties":{"name":"PIZZA hut"}},
            {"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1300,51.5070]},"properties":{"name":"Café Nero"}},
            {"type":"Feature","geometry":{"type":"Point","coordinates":[0,0]},"properties":{"name":"Null Island"}},
            {"type":"Feature","geometry":{"type":"Point","coordinates":[180,-90]},"properties":{"name":"Pole"}}
            ]}
            """
        let set = try! PlaceDataSet(data: Data(geoJSON.utf8), fileName: "fixture.geojson")
        let info = PlaceSetInfo(name: "fixture", count: set.index.count, bounds: BoundingBox(south: -90, west: -180, north: 90, east: 180))
        return LocalPlaces([LocalPlaces.DataSet(info: info, index: set.index)])
    }()
}
