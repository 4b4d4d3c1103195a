import Foundation
import Logging
import MeshDiscovery
import MeshSession

/// Discovery for the chat front: the library's ``NearbyPeerFinder`` (announce, browse, invite and
/// accept by ``AutoInvitePolicy``, or leave that to the user's `/invite`, `/accept` and `/decline`
/// with `--manual`), with its events shown as ``ChatOutput`` and peers picked by name or id prefix.
///
/// This type is thread-safe.
public final class PeerFinder: Sendable {
    /// How invitations are handled.
    public typealias Mode = NearbyPeerFinder.Mode

    /// The invitation timeout used for every invitation: 10 s.
    public static let invitationTimeout = NearbyPeerFinder.invitationTimeout

    private let finder: NearbyPeerFinder
    private let emit: @Sendable (ChatOutput) -> Void
    private let logger: Logger

    /// Creates the finder.
    /// - Parameters:
    ///   - session: the started session to announce and to invite peers into.
    ///   - advertiser: announces the session.
    ///   - browser: finds peers.
    ///   - mode: automatic or manual invitations.
    ///   - logger: for diagnostics.
    ///   - emit: shows an output.
    public init(session: Session, advertiser: NearbyServiceAdvertiser, browser: NearbyServiceBrowser, mode: Mode,
                logger: Logger, emit: @escaping @Sendable (ChatOutput) -> Void) {
        self.finder = NearbyPeerFinder(session: session, advertiser: advertiser, browser: browser, mode: mode, logger: logger)
        self.emit = emit
        self.logger = logger
    }

    /// Announces and browses until the calling task is cancelled; then withdraws both.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.finder.run() }
            group.addTask {
                for await event in self.finder.events { self.show(event) }
            }
        }
    }

    /// Announces the session under a new display name (after ``Session/rename(to:)``).
    /// - Parameter displayName: the new name (already accepted by the session).
    public func rename(to displayName: String) {
        do {
            try finder.rename(to: displayName)
        } catch {
            logger.warning("could not announce the new name", metadata: ["error": "\(error)"])
        }
    }

    /// Feeds a session event (the front owns the session's event stream).
    /// - Parameter event: the event.
    public func sessionEvent(_ event: SessionEvent) { finder.sessionEvent(event) }

    /// The discovered peers with their first address, for `/peers`.
    public var discovered: [(peer: PeerID, address: String?)] { finder.found.map { ($0.peer, $0.addresses.first) } }

    /// Peers whose invitation waits for the user's answer.
    public var pendingInvitations: [PeerID] { finder.pendingInvitations.map(\.peer) }

    // MARK: User commands

    /// `/invite PEER`: invites a discovered peer named by display name or id prefix.
    /// - Parameter name: the name or id prefix.
    /// - Returns: an error sentence, or `nil` when the invitation went out.
    public func invite(_ name: String) -> String? {
        switch Self.match(name, in: finder.found.map(\.peer)) {
        case .failure(let message): return message
        case .success(let peer):
            do {
                try finder.invite(peer)
                return nil
            } catch {
                return "\(error)"
            }
        }
    }

    /// `/accept [PEER]` and `/decline [PEER]`.
    /// - Parameters:
    ///   - name: the inviter's name or id prefix; `nil` when exactly one invitation is pending.
    ///   - accept: accept or decline.
    /// - Returns: an error sentence, or `nil` when answered.
    public func answer(_ name: String?, accept: Bool) -> String? {
        let pending = finder.pendingInvitations
        if pending.isEmpty { return "no invitation is waiting for an answer" }
        let chosen: Invitation
        if let name {
            switch Self.match(name, in: pending.map(\.peer)) {
            case .failure(let message): return message
            case .success(let peer):
                guard let invitation = pending.first(where: { $0.peer == peer }) else { return "no invitation from \(peer.displayName) is waiting" }
                chosen = invitation
            }
        } else {
            guard pending.count == 1, let only = pending.first else {
                return "\(pending.count) invitations are waiting; name the peer: " + pending.map(\.peer.displayName).joined(separator: ", ")
            }
            chosen = only
        }
        return finder.answer(chosen, accept: accept) ? nil : "the invitation from \(chosen.peer.displayName) has ended"
    }

    /// Finds one peer by exact display name, or else by id prefix.
    static func match(_ name: String, in peers: [PeerID]) -> Choice<PeerID> {
        switch PeerLookup.match(name, in: peers, noun: "discovered peer") {
        case .success(let peer): .success(peer)
        case .failure(let message): .failure(message)
        }
    }

    /// A value the user picked, or why none could be picked.
    enum Choice<Value> {
        case success(Value)
        case failure(String)
    }

    /// Shows what the library's finder reports.
    private func show(_ event: NearbyPeerFinder.Event) {
        switch event {
        case .advertising(let name, let serviceType):
            emit(.advertising(name: name, service: serviceType))
        case .discoveryFailed(let error):
            emit(.error("discovery: \(error.message)"))
        case .found(let peer, let addresses, let info, let isNew):
            emit(.found(peer, addresses: addresses, info: info, isNew: isNew))
        case .lost(let peer):
            emit(.lost(peer))
        case .invited(let peer):
            emit(.invitation(peer, direction: "sent", contextBytes: 0))
        case .invitationReceived(let invitation, let awaitsAnswer):
            emit(.invitation(invitation.peer, direction: "received", contextBytes: invitation.context.count, awaitsAnswer: awaitsAnswer))
        case .invitationEnded(let peer, let reason):
            emit(.invitationEnded(peer, reason: reason))
        }
    }
}
