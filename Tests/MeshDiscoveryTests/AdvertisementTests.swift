import MeshDiscovery
import MeshCore
import Testing

@Suite("Service types and TXT records (PROTOCOL.md §12)")
struct AdvertisementTests {
    static let node = try! NodeID(hex: "00112233445566778899aabbccddeeff")

    @Test("valid service types", arguments: ["meshchat", "a", "chat-2", "x1y2z3", "abcdefghijklmno", "9lives"])
    func validServiceTypes(_ type: String) throws {
        #expect(try ServiceType(type).dnsType == "_\(type)._tcp")
    }

    @Test("invalid service types name the rule", arguments: [
        ("", "empty"), ("abcdefghijklmnop", "16 characters"), ("MeshChat", "lowercase"), ("mesh_chat", "lowercase"),
        ("123", "at least one letter"), ("-chat", "begin or end"), ("chat-", "begin or end"), ("a--b", "two hyphens"),
        ("chät", "lowercase"),
    ])
    func invalidServiceTypes(_ type: String, _ fragment: String) {
        #expect {
            try ServiceType(type)
        } throws: { error in
            let error = error as! DiscoveryError
            return error.code == .invalidServiceType && error.message.contains(fragment)
        }
    }

    @Test("a TXT record round-trips: reserved keys first, then discoveryInfo sorted")
    func roundTrip() throws {
        let ad = try Advertisement(nodeID: Self.node, displayName: "álice", protocolVersion: 1,
                                   discoveryInfo: ["room": "blue", "emoji": "🦊", "empty": ""])
        #expect(ad.txt.map { String(decoding: $0, as: UTF8.self) }
                == ["_id=00112233445566778899aabbccddeeff", "_v=1", "_n=álice", "emoji=🦊", "empty=", "room=blue"])
        #expect(try Advertisement.decode(ad.txt) == ad)
    }

    @Test("the cipher suite offer (_s) goes after the name and round-trips; a record without it has none")
    func suitesRoundTrip() throws {
        var ad = try Advertisement(nodeID: Self.node, displayName: "bob", protocolVersion: 5, discoveryInfo: ["room": "blue"])
        #expect(try Advertisement.decode(ad.txt).suites == [])
        ad.suites = [2, 1]
        #expect(ad.txt.map { String(decoding: $0, as: UTF8.self) }
                == ["_id=00112233445566778899aabbccddeeff", "_v=5", "_n=bob", "_s=2,1", "room=blue"])
        #expect(try Advertisement.decode(ad.txt) == ad)
        #expect(try Advertisement.decode(ad.txt).discoveryInfo == ["room": "blue"], "_s is not discoveryInfo")
    }

    @Test("a malformed _s is dropped and the advertisement kept", arguments: [
        "", ",", "1,", "0", "256", "1,1", "1,2,3,4,5,6,7,8,9", "a", "+1", " 1", "0001", "-1", "99999999999999999999999",
    ])
    func malformedSuites(_ value: String) throws {
        let txt = ["_id=00112233445566778899aabbccddeeff", "_v=5", "_n=bob", "_s=\(value)"].map { Array($0.utf8) }
        let ad = try Advertisement.decode(txt)
        #expect(ad.suites == [])
        #expect(ad.displayName == "bob")
    }

    @Test("_s takes up to 8 ids of 1 to 255, unknown ones included, in the advertiser's order")
    func suitesLimits() throws {
        let txt = ["_id=00112233445566778899aabbccddeeff", "_v=5", "_n=bob", "_s=255,9,1,2,3,4,5,6"].map { Array($0.utf8) }
        #expect(try Advertisement.decode(txt).suites == [255, 9, 1, 2, 3, 4, 5, 6])
    }

    @Test("discoveryInfo limits", arguments: [
        (["_id": "x"], "reserved"), (["a=b": "c"], "\"=\""), (["": "v"], "empty"), (["Room": "a", "room": "b"], "ignore case"),
        (["k": String(repeating: "v", count: 254)], "at most 255"), (["tab\tkey": "v"], "byte 0x9"),
    ])
    func discoveryInfoLimits(_ info: [String: String], _ fragment: String) {
        #expect {
            try Advertisement.validate(info)
        } throws: { error in
            let error = error as! DiscoveryError
            return error.code == .invalidDiscoveryInfo && error.message.contains(fragment)
        }
    }

    @Test("discoveryInfo total limit is 1,024 bytes, exactly")
    func totalLimit() throws {
        // 8 entries of 1 + len("kN=" + 124 v) = 1 + 127 = 128 bytes → 1,024 exactly.
        var info: [String: String] = [:]
        for i in 0..<8 { info["k\(i)"] = String(repeating: "v", count: 124) }
        try Advertisement.validate(info)
        info["k0"]! += "v"
        #expect(throws: DiscoveryError.self) { try Advertisement.validate(info) }
    }

    static func txt(_ strings: [String]) -> [[UInt8]] { strings.map { Array($0.utf8) } }
    static let valid = ["_id=00112233445566778899aabbccddeeff", "_v=1", "_n=bob"]

    @Test("hostile records are refused with a reason", arguments: [
        (txt(["_v=1", "_n=bob"]), "no _id"),
        (txt(["_id=xyz", "_v=1", "_n=bob"]), "not a node id"),
        (txt(["_id=00112233445566778899aabbccddeeff", "_n=bob"]), "_v"),
        (txt(["_id=00112233445566778899aabbccddeeff", "_v=1"]), "_n"),
        (txt(valid + ["room=a", "ROOM=b"]), "more than once"),
        (txt(valid + ["_id=ffeeddccbbaa99887766554433221100"]), "more than once"),
        (txt(valid) + [Array("note=".utf8) + [0xff, 0xfe]], "not UTF-8"),
        (txt(valid) + [[0x01, 0x3d, 0x61]], "printable ASCII"),
        (txt(valid + ["=value"]), "empty key"),
        (txt(valid) + Array(repeating: Array(repeating: UInt8(ascii: "a"), count: 200), count: 7), "exceeds the maximum 1300"),
        (txt(valid) + [Array(repeating: UInt8(ascii: "a"), count: 256)], "the maximum is 255"),
    ] as [([[UInt8]], String)])
    func hostile(_ txt: [[UInt8]], _ fragment: String) {
        #expect {
            try Advertisement.decode(txt)
        } throws: { error in
            let error = error as! DiscoveryError
            return error.code == .invalidAdvertisement && error.message.contains(fragment)
        }
    }

    @Test("unknown reserved keys, flags and empty strings are tolerated")
    func tolerated() throws {
        let ad = try Advertisement.decode(Self.txt(Self.valid + ["_future=1", "flag", ""]))
        #expect(ad.discoveryInfo == ["flag": ""])
        #expect(ad.displayName == "bob")
    }
}
