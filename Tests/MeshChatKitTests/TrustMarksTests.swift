import Foundation
@testable import MeshChatKit
import MeshSession
import MeshStore
import MeshTestSupport
import Testing

/// Names bound to keys in the chat (PROTOCOL.md §20.3): lookups go to a name's holder only, and
/// every renderer shows verified peers and new keys.
@Suite("names bound to keys in the chat")
struct TrustMarksTests {
    static let bob = try! PeerID(id: NodeID(hex: "4fc54bc2369e9405ffb0174daced1b9c"), displayName: "bob")
    static let impostor = try! PeerID(id: NodeID(hex: "620da8ed2398ab78558d6094fbe211c8"), displayName: "Bob")
    static let carol = try! PeerID(id: NodeID(hex: "b9e645a5d0498fa866d678b2067c73b2"), displayName: "carol")

    /// bob seen first, then another key claiming "Bob"; carol verified.
    static var book: NameBook {
        var book = NameBook()
        book.observe(name: bob.displayName, node: bob.id, atMilliseconds: 1_000)
        book.observe(name: impostor.displayName, node: impostor.id, atMilliseconds: 2_000)
        book.observe(name: carol.displayName, node: carol.id, atMilliseconds: 3_000)
        book.setVerified(carol.id, true, atMilliseconds: 3_000)
        return book
    }

    @Test("a name goes to its holder only, also when the claimant is the only one by that name")
    func lookupHolderOnly() throws {
        #expect(PeerLookup.match("bob", in: [Self.impostor, Self.bob], noun: "peer", names: Self.book) == .success(Self.bob))
        #expect(PeerLookup.match("BOB", in: [Self.impostor, Self.bob], noun: "peer", names: Self.book) == .success(Self.bob))
        #expect(PeerLookup.match("Bob", in: [Self.impostor, Self.bob], noun: "peer", names: Self.book) == .success(Self.bob))
        guard case .failure(let message) = PeerLookup.match("bob", in: [Self.impostor], noun: "reachable peer", names: Self.book) else {
            Issue.record("the claimant must not get bob's lines")
            return
        }
        #expect(message.contains("4fc54bc2") && message.contains("620da8ed is another key"))
        // Its id prefix reaches the claimant.
        #expect(PeerLookup.match("620d", in: [Self.impostor, Self.bob], noun: "peer", names: Self.book) == .success(Self.impostor))
        // Without a book (or a name nobody holds) both are candidates, as before.
        guard case .failure = PeerLookup.match("BOB", in: [Self.impostor, Self.bob], noun: "peer") else {
            Issue.record("two bobs without a book are ambiguous")
            return
        }
    }

    @Test("meshchat send: a claimant is never picked by name; the holder from the history is")
    func oneShot() {
        var machine = OneShotSend(target: "bob", names: Self.book)
        #expect(machine.observe(reachable: [Self.impostor], connected: [Self.impostor], status: nil) == .wait)
        #expect(machine.deadlinePassed(known: [Self.impostor, Self.bob]) == .store(to: Self.bob))
        var alone = OneShotSend(target: "bob", names: Self.book)
        guard case .finish(.unknownPeer) = alone.deadlinePassed(known: [Self.impostor]) else {
            Issue.record("only the claimant known: nothing may be sent")
            return
        }
    }

    @Test("text, terminal and JSON mark verified peers and flag new keys; outside a scope nothing is marked")
    func marks() throws {
        let line = { (peer: PeerID) in ChatOutput.message(id: "94c37e7313876e15166fe569eac5eac7", from: peer, text: "hi", sentAt: Date()) }
        PeerMarks.$book.withValue(Self.book) {
            #expect(TextRenderer().render(line(Self.impostor)) == "<Bob (new key 620da8ed)> hi")
            #expect(TextRenderer().render(line(Self.carol)) == "<carol ✓> hi")
            #expect(TextRenderer().render(line(Self.bob)) == "<bob> hi")
            #expect(TextRenderer().render(.peer(Self.carol, state: "connected", address: nil, reason: nil)) == "* carol ✓ (b9e645a5) connected")
            var style = TerminalStyle()
            let styled = style.lines(for: line(Self.impostor), now: Date())
            #expect(styled.map(\.plain).joined().contains("Bob (new key 620da8ed)"))
        }
        #expect(TextRenderer().render(line(Self.impostor)) == "<Bob> hi")
        let json = PeerMarks.$book.withValue(Self.book) { JSONRenderer().render(.peers([
            ChatOutput.PeerRow(id: Self.impostor.id.hex, name: "Bob", state: "connected", address: nil),
            ChatOutput.PeerRow(id: Self.carol.id.hex, name: "carol", state: "connected", address: nil),
        ])) }
        let text = try #require(json)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let rows = try #require(parsed["peers"] as? [[String: Any]])
        #expect(rows[0]["newKey"] as? Bool == true && rows[0]["nameHolder"] as? String == Self.bob.id.hex && rows[0]["verified"] as? Bool == false)
        #expect(rows[1]["verified"] as? Bool == true && rows[1]["newKey"] == nil)
    }

    @Test("Tab completion offers a claimant by its id prefix, never by the held name")
    func completion() {
        var names = CompletionNames()
        PeerMarks.$book.withValue(Self.book) {
            names.learn(from: .peer(Self.impostor, state: "connected", address: nil, reason: nil))
            names.learn(from: .peer(Self.carol, state: "connected", address: nil, reason: nil))
        }
        #expect(names.words == ["620da8ed", "carol"])
    }

    @Test("the book reports a claim once, and /trust survives a new TrustBook over the same store")
    func storeAndReport() async throws {
        let directory = TemporaryDirectory()
        let store = try MessageStore(path: directory.appending("chat.sqlite"))
        let trust = TrustBook()
        #expect(trust.observe(Self.bob) == nil)
        #expect(trust.observe(Self.impostor) == Self.bob.id)
        #expect(trust.observe(Self.impostor) == nil, "reported twice")
        try await trust.setVerified(Self.bob, true, store: store)
        let again = TrustBook()
        #expect(await again.load(from: store) == nil)
        #expect(again.book.isVerified(Self.bob.id))
        #expect(again.book.holder(of: "BOB") == Self.bob.id)
        // A new name is saved at the next call; a mere sighting waits for the sightings interval.
        let stored = { try store.nameRecords(maxBytes: 100_000, limit: 100_000).rows.sorted { $0.key < $1.key }.map { $0.key + $0.value }.joined() }
        #expect(again.observe(Self.carol) == nil)
        await again.saveIfDirty(to: store)
        #expect(try stored().contains(Self.carol.id.hex))
        let before = try stored()
        _ = again.observe(Self.carol, now: Date().addingTimeInterval(60))
        await again.saveIfDirty(to: store)
        #expect(try stored() == before, "a sighting alone was saved at once")
        await again.saveIfDirty(to: store, now: .now + TrustBook.sightingsInterval)
        #expect(try stored() != before)
        // An earlier version's book that is damaged.
        let older = try MessageStore(path: directory.appending("older.sqlite"))
        try older.setSetting(TrustBook.settingKey, to: "{\"version\":1,\"nodes\":{\"zz\":{}}}")
        let damaged = TrustBook()
        #expect(await damaged.load(from: older)?.contains("could not be read") == true)
        #expect(damaged.book.records.isEmpty)
    }

    @Test("/forget releases a name on disk (the next key seen under it holds it); a verified rotation hands names and the mark on")
    func forgetAndRotate() async throws {
        let directory = TemporaryDirectory()
        let store = try MessageStore(path: directory.appending("chat.sqlite"))
        let trust = TrustBook()
        _ = trust.observe(Self.bob)
        #expect(trust.observe(Self.impostor) == Self.bob.id)
        #expect(try await trust.forget(name: "nobody", store: store) == nil)
        #expect(try await trust.forget(name: "BOB", store: store) == Self.bob.id)
        let reloaded = TrustBook()
        #expect(await reloaded.load(from: store) == nil)
        #expect(reloaded.book.holder(of: "bob") == nil)
        // The claimant takes the name at its next sighting.
        #expect(reloaded.observe(Self.impostor) == nil)
        #expect(reloaded.book.holder(of: "bob") == Self.impostor.id)

        // carol verified, then carol's key rotates to a new node: name and mark move, once.
        let newCarol = try PeerID(id: NodeID(hex: "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"), displayName: "carol")
        _ = reloaded.observe(Self.carol)
        try await reloaded.setVerified(Self.carol, true, store: store)
        #expect(reloaded.rotate(from: Self.carol.id, to: newCarol.id) == true)
        #expect(reloaded.book.holder(of: "carol") == newCarol.id)
        #expect(reloaded.book.isVerified(newCarol.id) && !reloaded.book.isVerified(Self.carol.id))
        #expect(reloaded.rotate(from: Self.carol.id, to: newCarol.id) == nil, "said twice")
        #expect(reloaded.observe(newCarol) == nil)
    }

    @Test("a disputed rotation (§20.2): the first successor keeps carol's name but loses the verification, saved; the claimant gets nothing")
    func disputedRotation() async throws {
        let directory = TemporaryDirectory()
        let store = try MessageStore(path: directory.appending("chat.sqlite"))
        let trust = TrustBook()
        let first = try PeerID(id: NodeID(hex: "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"), displayName: "carol")
        let claimant = try PeerID(id: NodeID(hex: "d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0"), displayName: "carol")
        _ = trust.observe(Self.carol)
        try await trust.setVerified(Self.carol, true, store: store)
        _ = trust.learn(from: .keyRotated(first, previous: Self.carol.id), me: Self.bob.id)
        #expect(trust.book.isVerified(first.id))
        _ = trust.learn(from: .keyRotationDisputed(claimant, previous: Self.carol.id, successor: first.id), me: Self.bob.id)
        #expect(!trust.book.isVerified(first.id) && !trust.book.isVerified(claimant.id))
        #expect(trust.book.holder(of: "carol") == first.id)
        #expect(trust.dispute(first.id) == false, "nothing more to withdraw")
        await trust.saveIfDirty(to: store)
        let reloaded = TrustBook()
        let problem = await reloaded.load(from: store)
        #expect(problem == nil, "\(problem ?? "")")
        #expect(!reloaded.book.isVerified(first.id) && reloaded.book.holder(of: "carol") == first.id)
    }

    @Test("the book is stored a row per node: a save writes only the nodes that changed; long, damaged and surplus rows are left out and reported; an earlier version's setting is moved to rows")
    func rows() async throws {
        let directory = TemporaryDirectory()
        let store = try MessageStore(path: directory.appending("chat.sqlite"))
        // An earlier version's book, in the setting.
        var legacy = NameBook()
        legacy.observe(name: "bob", node: Self.bob.id, atMilliseconds: 1)
        legacy.setVerified(Self.bob.id, true, atMilliseconds: 1)
        try store.setSetting(TrustBook.settingKey, to: String(decoding: legacy.encoded, as: UTF8.self))
        let trust = TrustBook()
        #expect(await trust.load(from: store) == nil)
        #expect(trust.book.isVerified(Self.bob.id))
        await trust.saveIfDirty(to: store)
        #expect(try store.setting(TrustBook.settingKey) == nil)
        #expect(try store.nameRecords(maxBytes: 100_000, limit: 100).rows.keys.sorted() == [Self.bob.id.hex])

        // A flood of new keys: each save writes their rows, never bob's again.
        try store.saveNameRecords([Self.bob.id.hex: "{\"marker\":1}"])
        for index in 0..<50 {
            _ = trust.observe(try PeerID(id: NodeID(hex: String(format: "%032x", 0x1000 + index)), displayName: "flood\(index)"))
        }
        await trust.saveIfDirty(to: store)
        let rows = try store.nameRecords(maxBytes: 100_000, limit: 1_000).rows
        #expect(rows.count == 51)
        #expect(rows[Self.bob.id.hex] == "{\"marker\":1}", "an unchanged node was written again")

        // Damaged and over-long rows are left out and reported; the rest load.
        try store.saveNameRecords([Self.bob.id.hex: "not json", Self.carol.id.hex: String(repeating: "x", count: TrustBook.maxRecordBytes + 1)])
        let again = TrustBook()
        let problem = try #require(await again.load(from: store))
        #expect(problem.contains("1 longer than") && problem.contains("1 damaged"), "\(problem)")
        #expect(again.book.records.count == 50)
        #expect(again.book.holder(of: "flood7") != nil && again.book.holder(of: "bob") == nil)
    }

    @Test("a verified rotation is one calm line, saying whether the peer is still verified")
    func rotationLine() throws {
        let text = try #require(ChatFront.render(.keyRotated(Self.carol, previous: Self.bob.id, verified: true), json: false))
        #expect(text == "* carol changed keys (verified rotation, 4fc54bc2 → b9e645a5); still verified")
        let unverified = try #require(ChatFront.render(.keyRotated(Self.carol, previous: Self.bob.id, verified: false), json: false))
        #expect(!unverified.contains("verified;") && !unverified.contains("still verified"))
    }
}
