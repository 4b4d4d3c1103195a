import MeshDiscovery
import MeshCore
import Testing

@Suite("PeerDirectory: sightings folded into peers")
struct PeerDirectoryTests {
    static let me = try! NodeID(hex: "00000000000000000000000000000001")
    static let bob = try! NodeID(hex: "00000000000000000000000000000002")
    static let carol = try! NodeID(hex: "00000000000000000000000000000003")

    static func sighting(_ node: NodeID, name: String = "bob", interface: String = "eth0", index: Int32 = 2,
                         protocol ip: IPProtocol = .ipv4, address: String = "192.0.2.2", port: Int = 7000,
                         version: UInt32 = 1) -> ResolvedService {
        let ad = try! Advertisement(nodeID: node, displayName: name, protocolVersion: version, discoveryInfo: ["room": "blue"])
        return ResolvedService(instance: ServiceInstance(name: name, interfaceIndex: index, interfaceName: interface, ipProtocol: ip),
                               hostName: "h.local", address: address, port: port, txt: ad.txt)
    }

    @Test("one peer seen on two interfaces and both protocols is one peer; lost after its last sighting")
    func oneAcrossInterfaces() {
        var directory = PeerDirectory(localNode: Self.me, protocolVersion: 1)
        let v4 = Self.sighting(Self.bob)
        let v6 = Self.sighting(Self.bob, protocol: .ipv6, address: "fe80::2%eth0")
        let wlan = Self.sighting(Self.bob, interface: "wlan0", index: 3, address: "198.51.100.2")
        guard case .found(let found)? = directory.resolved(v6).first else { Issue.record("not found"); return }
        #expect(found.endpoints.map(\.description) == ["[fe80::2%eth0]:7000"])
        guard case .updated(let updated)? = directory.resolved(v4).first else { Issue.record("not updated"); return }
        // IPv4 is preferred over link-local IPv6.
        #expect(updated.endpoints.first?.description == "192.0.2.2:7000")
        #expect(directory.resolved(wlan).count == 1)
        #expect(directory.all.count == 1)
        #expect(directory.removed(v4.instance).count == 1)  // updated
        #expect(directory.removed(wlan.instance).count == 1)
        let last = directory.removed(v6.instance)
        guard case .lost(let lost)? = last.first else { Issue.record("not lost: \(last)"); return }
        #expect(lost.advertisement.nodeID == Self.bob)
        #expect(directory.all.isEmpty)
    }

    @Test("this node's own advertisement is never a peer")
    func ownSkipped() {
        var directory = PeerDirectory(localNode: Self.me, protocolVersion: 1)
        #expect(directory.resolved(Self.sighting(Self.me, name: "me")).isEmpty)
        #expect(directory.all.isEmpty)
    }

    @Test("an invalid record or another protocol version is ignored with a reason")
    func ignored() {
        var directory = PeerDirectory(localNode: Self.me, protocolVersion: 1)
        var bad = Self.sighting(Self.bob)
        bad.txt = [Array("_v=1".utf8)]
        guard case .ignored(_, let reason)? = directory.resolved(bad).first else { Issue.record("not ignored"); return }
        #expect(reason.contains("_id"))
        guard case .ignored(_, let why)? = directory.resolved(Self.sighting(Self.carol, name: "carol", version: 2)).first else {
            Issue.record("not ignored"); return
        }
        #expect(why.contains("version 2"))
        #expect(directory.all.isEmpty)
    }

    @Test("a restart on a new port is an update, not a second peer")
    func restart() {
        var directory = PeerDirectory(localNode: Self.me, protocolVersion: 1)
        _ = directory.resolved(Self.sighting(Self.bob))
        guard case .updated(let peer)? = directory.resolved(Self.sighting(Self.bob, port: 7001)).first else {
            Issue.record("not updated"); return
        }
        #expect(peer.endpoints.map(\.port) == [7001])
        #expect(directory.resolved(Self.sighting(Self.bob, port: 7001)).isEmpty)  // unchanged: nothing to report
    }

    @Test("an instance whose TXT now names another node moves to it")
    func moved() {
        var directory = PeerDirectory(localNode: Self.me, protocolVersion: 1)
        _ = directory.resolved(Self.sighting(Self.bob, name: "shared"))
        let changes = directory.resolved(Self.sighting(Self.carol, name: "shared"))
        #expect(changes.count == 2)
        if case .lost(let lost) = changes[0] { #expect(lost.advertisement.nodeID == Self.bob) } else { Issue.record("\(changes)") }
        if case .found(let found) = changes[1] { #expect(found.advertisement.nodeID == Self.carol) } else { Issue.record("\(changes)") }
    }
}
