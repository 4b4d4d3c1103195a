import Foundation
import MeshDiscovery
import MeshLink
import MeshSession
import Testing

/// Waits for the first advertiser or browser event that matches, with a deadline.
func first<Element: Sendable, T: Sendable>(_ stream: AsyncStream<Element>, timeout: Duration = .seconds(10),
                                           _ match: @escaping @Sendable (Element) -> T?) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            for await element in stream {
                if let value = match(element) { return value }
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimeoutError(description: "no matching event within \(timeout)")
        }
        defer { group.cancelAll() }
        guard let value = try await group.next() ?? nil else { throw TimeoutError(description: "the stream ended") }
        return value
    }
}

/// Two nodes on loopback, `host` advertising and `guest` browsing, through an in-memory DNS-SD.
struct NearbyPair {
    let host: Node
    let guest: Node
    let advertiser: NearbyServiceAdvertiser
    let browser: NearbyServiceBrowser
    var hostEvents: EventReader
    var guestEvents: EventReader

    init(discoveryInfo: [String: String]? = nil, advertise: Bool = true) async throws {
        let fabric = MemoryDiscovery()
        host = try await Node("host")
        guest = try await Node("guest")
        hostEvents = EventReader(host)
        guestEvents = EventReader(guest)
        advertiser = try NearbyServiceAdvertiser(peer: host.id, discoveryInfo: discoveryInfo, serviceType: "meshchat", backend: fabric)
        browser = try NearbyServiceBrowser(peer: guest.id, serviceType: "meshchat", backend: fabric)
        if advertise {
            advertiser.start(session: host.session)
        } else {
            // Published but not taking invitations: only the TXT record, no advertiser on the session.
            let ad = try Advertisement(nodeID: host.id.id, displayName: "host", protocolVersion: HandshakeStateMachine.protocolVersion, discoveryInfo: [:])
            _ = try fabric.publish(ServiceRegistration(name: "host", type: "_meshchat._tcp", port: host.port, txt: ad.txt)) { _ in }
        }
        browser.start()
    }

    func found() async throws -> (PeerID, [String: String]) {
        try await first(browser.events) { event in
            if case .foundPeer(let peer, let info) = event { return (peer, info) }
            return nil
        }
    }

    func invitation() async throws -> Invitation {
        try await first(advertiser.events) { event in
            if case .receivedInvitation(let invitation) = event { return invitation }
            return nil
        }
    }

    func stop() async {
        advertiser.close()
        browser.close()
        await guest.stop()
        await host.stop()
    }
}

@Suite("Advertiser, browser and invitations (PROTOCOL.md §4.8, §12)", .serialized)
struct InvitationTests {
    @Test("found peer carries its discoveryInfo; an accepted invitation connects both sides and carries the context")
    func accepted() async throws {
        var pair = try await NearbyPair(discoveryInfo: ["room": "blue"])
        let (peer, info) = try await pair.found()
        #expect(peer == pair.host.id && peer.displayName == "host")
        #expect(info == ["room": "blue"])
        #expect(pair.browser.endpoints(of: peer).first?.port == pair.host.port)
        try pair.browser.invitePeer(peer, to: pair.guest.session, withContext: Data("let's chat".utf8), timeout: .seconds(10))
        let invitation = try await pair.invitation()
        #expect(invitation.peer == pair.guest.id)
        #expect(invitation.context == Data("let's chat".utf8))
        #expect(pair.host.session.connectedPeers.isEmpty)  // nothing before the answer
        invitation.accept()
        #expect(try await pair.hostEvents.connected() == pair.guest.id)
        #expect(try await pair.guestEvents.connected() == pair.host.id)
        try await pair.guest.session.send(Data([7]), to: [pair.host.id], mode: .reliable)
        #expect(try await pair.hostEvents.data().content == .data(Data([7])))
        await pair.stop()
    }

    @Test("a declined invitation reaches the inviter with the reason; nobody connects")
    func declined() async throws {
        var pair = try await NearbyPair()
        let (peer, _) = try await pair.found()
        try pair.browser.invitePeer(peer, to: pair.guest.session, withContext: nil, timeout: .seconds(10))
        try await pair.invitation().decline(reason: "busy right now")
        let failure = try await pair.guestEvents.next { event -> InvitationFailure? in
            if case .invitationFailed(_, let failure) = event { return failure }
            return nil
        }
        #expect(failure.kind == .declined && failure.message == "busy right now")
        #expect(pair.host.session.connectedPeers.isEmpty && pair.guest.session.connectedPeers.isEmpty)
        await pair.stop()
    }

    @Test("an unanswered invitation times out on both sides")
    func timedOut() async throws {
        var pair = try await NearbyPair()
        let (peer, _) = try await pair.found()
        try pair.browser.invitePeer(peer, to: pair.guest.session, withContext: nil, timeout: .seconds(1))
        let invitation = try await pair.invitation()
        let failure = try await pair.guestEvents.next { event -> InvitationFailure? in
            if case .invitationFailed(_, let failure) = event { return failure }
            return nil
        }
        #expect(failure.kind == .timedOut)
        let ended = try await first(pair.advertiser.events) { event -> Invitation? in
            if case .invitationEnded(let ended, _) = event { return ended }
            return nil
        }
        #expect(ended === invitation)
        invitation.accept()  // too late: ignored
        #expect(pair.host.session.connectedPeers.isEmpty)
        await pair.stop()
    }

    @Test("a session that is not advertising declines invitations at once")
    func notAdvertising() async throws {
        var pair = try await NearbyPair(advertise: false)
        let (peer, _) = try await pair.found()
        try pair.browser.invitePeer(peer, to: pair.guest.session, withContext: nil, timeout: .seconds(10))
        let failure = try await pair.guestEvents.next { event -> InvitationFailure? in
            if case .invitationFailed(_, let failure) = event { return failure }
            return nil
        }
        #expect(failure.kind == .declined && failure.message.contains("not advertising"))
        await pair.stop()
    }

    @Test("an oversized context is refused at the inviter")
    func oversizedContext() async throws {
        let pair = try await NearbyPair()
        let (peer, _) = try await pair.found()
        #expect(throws: DiscoveryError.self) {
            try pair.browser.invitePeer(peer, to: pair.guest.session, withContext: Data(count: 4097), timeout: .seconds(5))
        }
        await pair.stop()
    }

    @Test("both sides invite each other at the same moment: one connection per pair")
    func simultaneous() async throws {
        let fabric = MemoryDiscovery()
        let a = try await Node("a")
        let b = try await Node("b")
        var aEvents = EventReader(a)
        var bEvents = EventReader(b)
        let adA = try NearbyServiceAdvertiser(peer: a.id, serviceType: "meshchat", backend: fabric)
        let adB = try NearbyServiceAdvertiser(peer: b.id, serviceType: "meshchat", backend: fabric)
        adA.start(session: a.session)
        adB.start(session: b.session)
        let browseA = try NearbyServiceBrowser(peer: a.id, serviceType: "meshchat", backend: fabric)
        let browseB = try NearbyServiceBrowser(peer: b.id, serviceType: "meshchat", backend: fabric)
        browseA.start()
        browseB.start()
        for (advertiser, name) in [(adA, "a"), (adB, "b")] {
            Task {
                for await event in advertiser.events {
                    if case .receivedInvitation(let invitation) = event { invitation.accept() }
                }
                _ = name
            }
        }
        try browseA.invitePeer(b.id, to: a.session, withContext: nil, timeout: .seconds(10))
        try browseB.invitePeer(a.id, to: b.session, withContext: nil, timeout: .seconds(10))
        #expect(try await aEvents.connected() == b.id)
        #expect(try await bEvents.connected() == a.id)
        // Both invitations complete; §4.7 retires one link. The survivor carries traffic both ways.
        try await a.session.send(Data([1]), to: [b.id], mode: .reliable)
        try await b.session.send(Data([2]), to: [a.id], mode: .reliable)
        #expect(try await bEvents.data().content == .data(Data([1])))
        #expect(try await aEvents.data().content == .data(Data([2])))
        #expect(a.session.connectedPeers == [b.id] && b.session.connectedPeers == [a.id])
        for item in [adA, adB] { item.close() }
        for item in [browseA, browseB] { item.close() }
        await b.stop()
        await a.stop()
    }

    @Test("advertiser and browser validate service type and discoveryInfo as Multipeer does")
    func validation() throws {
        let me = try PeerID(id: NodeID(hex: "000102030405060708090a0b0c0d0e0f"), displayName: "me")
        #expect(throws: DiscoveryError.self) { try NearbyServiceAdvertiser(peer: me, serviceType: "Bad_Type") }
        #expect(throws: DiscoveryError.self) { try NearbyServiceBrowser(peer: me, serviceType: "way-too-long-service") }
        #expect(throws: DiscoveryError.self) { try NearbyServiceAdvertiser(peer: me, discoveryInfo: ["a=b": "c"], serviceType: "meshchat") }
    }
}
