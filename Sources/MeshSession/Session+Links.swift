import struct Foundation.Data
import struct Foundation.Date
import Logging
import MeshLink
import MeshTransport
import MeshWire
import NIOConcurrencyHelpers
import NIOCore

/// What the advertiser hears about invitations this session received.
enum InvitationNotice: Sendable {
    /// A new invitation waits for an answer.
    case received(Invitation)
    /// An invitation ended without this node's answer taking effect: expired or withdrawn.
    case ended(Invitation, reason: String)
}

extension Session {
    /// Why a link exists, which decides what its establishment means.
    enum LinkPurpose: Sendable {
        /// Accepted by the listener: a plain link, or an invitation if the initiator says so.
        case accepted
        /// Opened by ``Session/connect(host:port:)`` (`quiet`: a redial reports no failure;
        /// `redial`: the token of the kept address, ``Session/connect(host:port:redial:)``).
        case dialed(address: String, quiet: Bool, redial: UInt64?)
        /// Opened to invite a discovered peer (PROTOCOL.md §4.8).
        case invitation(PeerID, deadline: NIODeadline, timeoutMilliseconds: UInt32)
        /// Opened to one address of nearby connection data (§4.10); a failure goes to the attempt.
        case nearby(NearbyAttempt)
    }

    /// Where a link is in its life, as its serving task sees it.
    private enum Phase {
        /// Handshaking.
        case opening
        /// This node invited the peer and waits for `invitationAccepted` (§4.8).
        case awaitingAnswer(LinkInfo, LinkWriter)
        /// The peer invited this node; the application has not answered yet.
        case invited(LinkInfo, LinkWriter, Invitation)
        /// Registered as the peer's link: messages are delivered (by the link's inbound path).
        case admitted(PeerID, LinkInbound)
        /// Lost the duplicate tie-break: delivering until the peer's goodbye (§4.7).
        case draining(PeerID, LinkInbound)
        /// Closing on this node's decision.
        case closing
    }

    // MARK: Serving a link

    /// Runs one link from its handshake to its end, reporting what happens as events.
    /// - Returns: the peer, when the link was established.
    @discardableResult
    func serve(_ link: LinkChannel, purpose: LinkPurpose) async -> PeerID? {
        var phase = Phase.opening
        var connectingPeer: PeerID?
        var closeReason: LinkCloseReason?
        var answerTimedOut = false
        let channel = link.channel
        let lane = ObjectIdentifier(channel)
        // The count starts with the first envelope passed up (perhaps before this task began: the
        // handshake does not wait for it), and ends with the link.
        defer { registry.withLockedValue { _ = $0.passedUp.removeValue(forKey: lane) } }
        do {
            try await link.executeThenClose { linkEvents, _ in
                for try await event in linkEvents {
                    // Counted out once handled (handed to the inbound path), not when taken: a newer
                    // envelope taking that path directly must not overtake this one.
                    var counted = false
                    if case .envelope = event { counted = true }
                    defer { if counted { registry.withLockedValue { $0.passedUp[lane]? -= 1 } } }
                    switch event {
                    case .connecting(let remote):
                        let peer = PeerID(remote: remote)
                        if case .invitation(let expected, _, _) = purpose, expected.id != peer.id {
                            Self.close(channel, .invalidIdentity, "expected node \(expected.id.shortHex), this is node \(peer.id.shortHex)")
                            phase = .closing
                            continue
                        }
                        connectingPeer = await announceConnecting(peer)
                    case .established(let info):
                        guard case .opening = phase else { continue }
                        let peer = PeerID(remote: info.peer)
                        let writer = LinkWriter(channel: channel,
                                                highWaterMark: configuration.transport.writeHighWaterMark,
                                                lowWaterMark: configuration.transport.writeLowWaterMark)
                        if case .invitation(_, let deadline, _) = purpose {
                            phase = .awaitingAnswer(info, writer)
                            channel.eventLoop.scheduleTask(deadline: deadline) {
                                channel.triggerUserOutboundEvent(LinkHandler.Marker(LinkMarker.answerTimedOut.rawValue), promise: nil)
                            }
                        } else if let request = info.invitation {
                            phase = await received(request, from: peer, info: info, writer: writer, channel: channel)
                            if case .invited = phase { connectingPeer = await announceConnecting(peer) }
                        } else if case .dialed(let address, _, let token?) = purpose,
                                  !keptLinkEstablished(address, token: token, peer: peer) {
                            Self.close(channel, .normal, "this node stopped connecting to \(address)")
                            phase = .closing
                        } else if case .nearby(let attempt) = purpose, let kept = attempt.kept,
                                  !keptLinkEstablished(kept.address, token: kept.token, peer: peer) {
                            Self.close(channel, .normal, "this node stopped connecting to \(kept.address)")
                            phase = .closing
                        } else {
                            phase = await admit(info, peer: peer, channel: channel, writer: writer)
                        }
                    case .envelope(let envelope):
                        switch phase {
                        case .admitted(_, let inbound), .draining(_, let inbound):
                            // Passed up before the link's inbound path took over (or on a retired
                            // link): handed to it in order, so there is one way to handle a message.
                            try await inbound.loop.submit { inbound.receive(envelope) }.get()
                        case .awaitingAnswer(let info, let writer):
                            if case .invitationAccepted = envelope.body {
                                phase = await admit(info, peer: PeerID(remote: info.peer), channel: channel, writer: writer)
                            } else {
                                Self.close(channel, .protocolViolation, "a message arrived before the invitation was answered")
                                phase = .closing
                            }
                        case .invited:
                            Self.close(channel, .protocolViolation, "a message arrived before this node answered the invitation")
                            phase = .closing
                        case .opening, .closing:
                            continue
                        }
                    case .roundTrip(let nanoseconds):
                        if case .admitted(let peer, _) = phase {
                            await perform(mesh.neighborLatency(peer.id, .nanoseconds(Int64(clamping: nanoseconds))))
                        }
                    case .marker(let value):
                        phase = await handle(LinkMarker(rawValue: value), in: phase, channel: channel, answerTimedOut: &answerTimedOut)
                    case .closed(let reason):
                        closeReason = reason
                    }
                }
            }
        } catch is CancellationError {
            if closeReason == nil { closeReason = LinkCloseReason(.normal, "this node disconnected") }
        } catch {
            if closeReason == nil { closeReason = LinkCloseReason(.connectionLost, Self.describe(error)) }
        }
        // What the link read before it ended reaches the application before its end does.
        switch phase {
        case .admitted(_, let inbound), .draining(_, let inbound): try? await inbound.drain().get()
        default: break
        }
        await finished(phase: phase, purpose: purpose, connectingPeer: connectingPeer, closeReason: closeReason,
                       answerTimedOut: answerTimedOut, channel: channel)
        switch phase {
        case .admitted(let peer, _), .draining(let peer, _): return peer
        default: return nil
        }
    }

    /// Reports a peer `connecting` unless it is connected already (through another link).
    /// - Returns: the peer when it was reported, so that its end can be reported too.
    private func announceConnecting(_ peer: PeerID) async -> PeerID? {
        guard registry.withLockedValue({ $0.entries[peer.id] == nil }) else { return nil }
        await events.push(.peerChanged(peer, .connecting))
        return peer
    }

    /// Acts on a local marker in order with the link's other events.
    private func handle(_ marker: LinkMarker?, in phase: Phase, channel: any Channel, answerTimedOut: inout Bool) async -> Phase {
        switch (marker, phase) {
        case (.answered, .invited(let info, let writer, let invitation)):
            pendingInvitations.withLockedValue { $0 -= 1 }
            switch invitation.currentAnswer {
            case .accepted:
                do {
                    try await writer.write(.invitationAccepted, size: SecureChannel.wireSize(ofMessage: 2))
                } catch {
                    return .closing
                }
                return await admit(info, peer: invitation.peer, channel: channel, writer: writer)
            case .declined(let reason):
                Self.close(channel, .invitationDeclined, reason)
                return .closing
            case nil:
                return phase
            }
        case (.invitationExpired, .invited(_, _, let invitation)):
            pendingInvitations.withLockedValue { $0 -= 1 }
            Self.close(channel, .invitationTimeout, "the invitation was not answered within \(invitation.timeout)")
            notify(.ended(invitation, reason: "not answered within \(invitation.timeout)"))
            return .closing
        case (.answerTimedOut, .awaitingAnswer):
            answerTimedOut = true
            Self.close(channel, .invitationTimeout, "no answer to the invitation in time")
            return .closing
        default:
            return phase
        }
    }

    /// A peer invited this node: hand the invitation to the advertiser, or decline it at once.
    private func received(_ request: InvitationRequest, from peer: PeerID, info: LinkInfo, writer: LinkWriter,
                          channel: any Channel) async -> Phase {
        let timeout = Duration.milliseconds(Int64(request.timeoutMilliseconds))
        let invitation = Invitation(peer: peer, context: request.context, timeout: timeout,
                                    remoteAddress: info.remoteAddress.map(Self.format), channel: channel)
        guard let observer = invitationObserver.withLockedValue({ $0 }) else {
            logger.debug("declined an invitation: not advertising", metadata: ["mesh.peer": "\(peer.id)"])
            Self.close(channel, .invitationDeclined, "this peer accepts no invitations (it is not advertising)")
            return .closing
        }
        let admitted = pendingInvitations.withLockedValue { count -> Bool in
            guard count < Self.maxPendingInvitations else { return false }
            count += 1
            return true
        }
        guard admitted else {
            logger.notice("declined an invitation: too many pending", metadata: ["mesh.peer": "\(peer.id)", "limit": "\(Self.maxPendingInvitations)"])
            Self.close(channel, .invitationDeclined, "this peer has \(Self.maxPendingInvitations) invitations waiting for an answer")
            return .closing
        }
        logger.debug("received an invitation", metadata: ["mesh.peer": "\(peer.id)", "invitation.context.bytes": "\(request.context.count)"])
        channel.eventLoop.scheduleTask(in: .milliseconds(Int64(request.timeoutMilliseconds))) {
            channel.triggerUserOutboundEvent(LinkHandler.Marker(LinkMarker.invitationExpired.rawValue), promise: nil)
        }
        observer(.received(invitation))
        return .invited(info, writer, invitation)
    }

    private func notify(_ notice: InvitationNotice) {
        invitationObserver.withLockedValue { $0 }?(notice)
    }

    /// Registers an established link as the peer's (or retires it when another link wins §4.7).
    private func admit(_ info: LinkInfo, peer: PeerID, channel: any Channel, writer: LinkWriter) async -> Phase {
        let inbound = LinkInbound(sender: peer, channel: channel, session: self)
        switch registerLink(info, peer: peer, channel: channel, writer: writer) {
        case .first:
            // The router knows the neighbour before anyone hears it is connected (a send that
            // follows the event can be routed); its reachability events come after. A key rotation
            // comes first of all (§20.2), so the application carries the old node over before it
            // meets the new one.
            for event in mesh.learnRotations(info.peer.rotation.map { [$0] } ?? [], identityKey: info.peer.identityKey,
                                             displayName: peer.displayName) {
                await events.push(event)
            }
            let step = mesh.neighborUp(peer, staticKey: info.peer.staticKey, identityKey: info.peer.identityKey,
                                       prekey: info.peer.signedPrekey, latency: info.handshakeRoundTrip.map { .nanoseconds(Int64(clamping: $0)) })
            await events.push(.peerChanged(peer, .connected))
            await perform(step)
            attach(inbound, to: peer.id)
            return .admitted(peer, inbound)
        case .replaced:
            attach(inbound, to: peer.id)
            return .admitted(peer, inbound)
        case .tookOver:
            // The peer retired its previous link for this one (§4.7) and was never reported gone:
            // the application and the router see one uninterrupted connection.
            logger.debug("a link took over from the one the peer retired", metadata: ["mesh.peer": "\(peer.id)"])
            attach(inbound, to: peer.id)
            return .admitted(peer, inbound)
        case .lost:
            // Keep reading: the peer may have written to this link before it learned that it
            // lost; everything up to its goodbye is delivered.
            logger.debug("retiring duplicate link", metadata: ["mesh.peer": "\(peer.id)"])
            Self.retire(channel)
            return .draining(peer, inbound)
        }
    }

    /// Reports how a link ended.
    private func finished(phase: Phase, purpose: LinkPurpose, connectingPeer: PeerID?, closeReason: LinkCloseReason?,
                          answerTimedOut: Bool, channel: any Channel) async {
        var phase = phase
        // A link this node closed (a protocol violation, a receive limit) may still be the peer's
        // registered link: it ends like any admitted link, or the peer stays a ghost neighbour.
        if case .closing = phase,
           let peer = registry.withLockedValue({ $0.entries.values.first { $0.channel === channel }?.peer }) {
            phase = .admitted(peer, LinkInbound(sender: peer, channel: channel, session: self))
        }
        if case .admitted(let peer, _) = phase {
            let wasCurrent = registry.withLockedValue { $0.remove(peer.id, channel: channel) }
            if wasCurrent {
                sockets.withLockedValue { $0?.udp }?.unregister(node: peer.id)
                if let closeReason, closeReason.code == .duplicateConnection, closeReason.isRemote,
                   await !handedOver(peer) {
                    return
                }
                let reason = closeReason.map {
                    DisconnectReason(code: "\($0.code)", message: $0.message, isRemote: $0.isRemote)
                }
                let step = mesh.neighborDown(peer.id)
                await events.push(.peerChanged(peer, .notConnected(reason)))
                await perform(step)
                wakeRedials(for: peer.id)
            }
            return
        }
        if case .draining = phase { return }
        if case .invited(_, _, let invitation) = phase {
            // The inviter went away (or the session stopped) before the answer.
            pendingInvitations.withLockedValue { $0 -= 1 }
            notify(.ended(invitation, reason: closeReason?.description ?? "the link closed"))
        }
        let reason = closeReason ?? LinkCloseReason(.normal, "the link closed")
        if let peer = connectingPeer, registry.withLockedValue({ $0.entries[peer.id] == nil }) {
            let why = DisconnectReason(code: "\(reason.code)", message: reason.message, isRemote: reason.isRemote)
            await events.push(.peerChanged(peer, .notConnected(why)))
        }
        switch purpose {
        case .invitation(let peer, _, let milliseconds):
            let failure: InvitationFailure
            if answerTimedOut {
                failure = InvitationFailure(.timedOut, "no answer within \(Duration.milliseconds(Int64(milliseconds)))")
            } else if reason.code == .invitationDeclined, reason.isRemote {
                failure = InvitationFailure(.declined, reason.message)
            } else if reason.code == .invitationTimeout {
                failure = InvitationFailure(.timedOut, reason.message)
            } else {
                failure = InvitationFailure(.unreachable, reason.description)
            }
            logger.debug("invitation failed", metadata: ["mesh.peer": "\(peer.id)", "invitation.failure": "\(failure)"])
            await events.push(.invitationFailed(peer, failure))
        case .dialed(let address, let quiet, _):
            if !quiet, reason.code != .duplicateConnection {
                await events.push(.connectFailed(address: address, reason: reason.description))
            }
        case .nearby(let attempt):
            attempt.failed(reason.description)
        case .accepted:
            logger.debug("incoming link ended before it was established", metadata: ["link.reason": "\(reason)"])
        }
    }

    /// How long a peer that retired this node's current link for another one (§4.7) may take to
    /// complete that other link here before it is reported gone. The other link may still be
    /// waiting for an invitation's answer, which the peer sent on that link while its goodbye came
    /// on this one: two connections, no order between them.
    static let handoverGrace = Duration.seconds(5)

    /// The peer closed this node's current link to it with a `duplicateConnection` goodbye: another
    /// link won the tie-break at its end. Waits up to ``handoverGrace`` for that link to be
    /// admitted here (``Registration/tookOver``).
    /// - Returns: `true` when no link took over, so the peer is to be reported gone; `false` when
    ///   one did, and nothing is reported.
    private func handedOver(_ peer: PeerID) async -> Bool {
        registry.withLockedValue { _ = $0.handingOver.insert(peer.id) }
        logger.debug("the peer retired its link here; waiting for the link that replaces it",
                     metadata: ["mesh.peer": "\(peer.id)", "grace": "\(Self.handoverGrace)"])
        try? await sleep(for: Self.handoverGrace)
        // Still marked: no link took over (admitting one clears the mark under the same lock).
        return registry.withLockedValue { $0.handingOver.remove(peer.id) != nil }
    }

    // MARK: Registry

    private enum Registration {
        /// The peer's first link: it is connected now.
        case first
        /// The link replaces the peer's current one, which is retired.
        case replaced
        /// The link arrived while the peer's previous one, retired by the peer, was waiting for its
        /// successor (``handedOver(_:)``): it is registered and nothing is reported.
        case tookOver
        /// Another link to the peer wins (§4.7): this one is retired.
        case lost
    }

    private func registerLink(_ info: LinkInfo, peer: PeerID, channel: any Channel, writer: LinkWriter) -> Registration {
        let me = localID
        let initiator = info.role == .initiator ? me : peer.id
        let entry = LinkRegistry.Entry(peer: peer, channel: channel, writer: writer, initiator: initiator, suite: info.suite)
        let (result, loser): (Registration, (any Channel)?) = registry.withLockedValue { registry in
            guard let existing = registry.entries[peer.id] else {
                registry.entries[peer.id] = entry
                return (registry.handingOver.remove(peer.id) != nil ? .tookOver : .first, nil)
            }
            // §4.7: keep the link initiated by the lower node id; between two links with the
            // same initiator keep the newer (the older one is a leftover from before a restart).
            let lower = min(me, peer.id)
            let keepNew = existing.initiator == initiator || initiator == lower
            if keepNew {
                registry.entries[peer.id] = entry
                return (.replaced, existing.channel)
            }
            return (.lost, nil)
        }
        if let loser {
            logger.debug("retiring the link this one replaces", metadata: ["mesh.peer": "\(peer.id)"])
            Self.retire(loser)
        }
        if result != .lost, let udp = sockets.withLockedValue({ $0?.udp }), info.peer.udpPort != 0,
           let address = info.remoteAddress.flatMap({ Self.address($0, port: Int(info.peer.udpPort)) }) {
            udp.register(node: peer.id, keys: info.datagramKeys, address: address)
        }
        return result
    }

    /// Retires a duplicate link (§4.7): goodbye, no more writes, read until the peer's goodbye.
    private static func retire(_ channel: any Channel) {
        channel.triggerUserOutboundEvent(
            LinkHandler.Retire(code: .duplicateConnection, reason: "another link to this peer won the tie-break"),
            promise: nil)
    }

    /// Closes a link with a goodbye that tells the peer why.
    private static func close(_ channel: any Channel, _ code: CloseCode, _ reason: String) {
        channel.triggerUserOutboundEvent(LinkHandler.Close(code: code, reason: reason), promise: nil)
    }

    /// The same IP address with another port (scope id kept for link-local IPv6).
    static func address(_ address: SocketAddress, port: Int) -> SocketAddress? {
        var copy = address
        guard copy.port != nil else { return nil }
        copy.port = port
        return copy
    }

    /// Where an established link's envelopes go first, on its event loop (the transport's
    /// interceptor): to the link's inbound path once the peer is admitted and connected, and
    /// nothing of this link still waits in its serving task (order); otherwise up to that task,
    /// which hands what comes after admission to the same inbound path.
    /// - Returns: whether the envelope was consumed.
    func intercept(_ envelope: Envelope, from node: NodeID, channel: any Channel) -> Bool {
        let lane = ObjectIdentifier(channel)
        let inbound = registry.withLockedValue { registry -> LinkInbound? in
            if let entry = registry.entries[node], entry.channel === channel, let inbound = entry.inbound,
               registry.passedUp[lane, default: 0] == 0 {
                return inbound
            }
            // Counted from the first envelope on, whether or not the serving task has begun, so
            // that the count is exact: a count that went below 0 could come back to 0 while
            // envelopes still wait in the task's stream, and the next one would overtake them.
            registry.passedUp[lane, default: 0] += 1
            return nil
        }
        guard let inbound else { return false }
        inbound.receive(envelope)
        return true
    }

    /// Lets a registered link's envelopes take its inbound path directly: set once the
    /// application has been told the peer is connected, so nothing from it can arrive before that.
    private func attach(_ inbound: LinkInbound, to node: NodeID) {
        registry.withLockedValue { registry in
            if registry.entries[node]?.channel === inbound.channel { registry.entries[node]?.inbound = inbound }
        }
    }

    /// Why a neighbour's envelope breaks a limit that binds receivers too (PROTOCOL.md §6.1, §10):
    /// a chat line over ``WireLimits/maxChatTextBytes`` or with a message id that is not 16 bytes.
    /// `nil` when it is within the limits.
    static func violation(in envelope: Envelope) -> String? {
        if case .direct(let direct)? = envelope.body, direct.payload.count > WireLimits.maxRelayedPayload {
            return "a direct channel message of \(direct.payload.count) bytes (maximum \(WireLimits.maxRelayedPayload))"
        }
        guard case .chat(let chat)? = envelope.body else { return nil }
        if chat.text.utf8.count > WireLimits.maxChatTextBytes {
            return "a chat line of \(chat.text.utf8.count) bytes (maximum \(WireLimits.maxChatTextBytes))"
        }
        if chat.messageID.count != NodeID.byteCount {
            return "a chat message id of \(chat.messageID.count) bytes (expected \(NodeID.byteCount))"
        }
        return nil
    }

    static func message(from envelope: Envelope, sender: PeerID) -> ReceivedMessage? {
        switch envelope.body {
        case .data(let data):
            return ReceivedMessage(sender: sender, mode: .reliable, content: .data(data.payload), isPrivate: true)
        case .chat(let chat):
            let id = (try? NodeID(bytes: chat.messageID))?.hex ?? chat.messageID.map { String(format: "%02x", $0) }.joined()
            let text = TextMessage(id: id, text: chat.text,
                                   sentAt: Date(timeIntervalSince1970: Double(chat.sentAtMs) / 1000))
            return ReceivedMessage(sender: sender, mode: .reliable, content: .text(text), isPrivate: true)
        default:
            return nil
        }
    }
}
