import struct Foundation.Data
import MeshTransport
import NIOConcurrencyHelpers
import NIOCore

/// An invitation from a peer to join this node's session (Multipeer's
/// `advertiser(_:didReceiveInvitationFromPeer:withContext:invitationHandler:)`), answered with
/// ``accept()`` or ``decline(reason:)``.
///
/// The link to the inviter is already authenticated: ``peer`` is who it claims to be. Until the
/// invitation is answered the peer is ``PeerState/connecting`` and nothing but the answer travels on
/// the link; the inviter gives up after ``timeout`` (and so does this node), which ends the
/// invitation as ``NearbyServiceAdvertiser/Event/invitationEnded(_:reason:)``. Only the first answer
/// counts. This type is thread-safe.
public final class Invitation: Sendable, CustomStringConvertible {
    /// The inviting peer (authenticated).
    public let peer: PeerID
    /// The inviter's context: untrusted bytes, at most 4,096 (PROTOCOL.md §4.8).
    public let context: Data
    /// How long the inviter waits for the answer.
    public let timeout: Duration
    /// The address the invitation came from, e.g. `192.0.2.7:53122`.
    public let remoteAddress: String?

    private let channel: any Channel
    private let answer = NIOLockedValueBox<Answer?>(nil)

    enum Answer: Sendable, Equatable {
        case accepted
        case declined(String)
    }

    init(peer: PeerID, context: Data, timeout: Duration, remoteAddress: String?, channel: any Channel) {
        self.peer = peer
        self.context = context
        self.timeout = timeout
        self.remoteAddress = remoteAddress
        self.channel = channel
    }

    /// Accepts: the peer becomes ``PeerState/connected`` in the session (a ``SessionEvent``).
    /// Ignored when the invitation was already answered or has ended.
    public func accept() { answer(.accepted) }

    /// Declines: the inviter learns it, with the reason.
    /// - Parameter reason: a short sentence for the inviter (at most 256 bytes are sent).
    public func decline(reason: String = "the invitation was declined") {
        answer(.declined(String(decoding: Array(reason.utf8.prefix(256)), as: UTF8.self)))
    }

    /// The answer given, if any.
    var currentAnswer: Answer? { answer.withLockedValue { $0 } }

    private func answer(_ value: Answer) {
        let first = answer.withLockedValue { current -> Bool in
            guard current == nil else { return false }
            current = value
            return true
        }
        guard first else { return }
        channel.triggerUserOutboundEvent(LinkHandler.Marker(LinkMarker.answered.rawValue), promise: nil)
    }

    /// `invitation from alice (3fa2c1d0)`.
    public var description: String { "invitation from \(peer)" }
}

/// Local events put into a link's stream so that the serving task acts on them in order.
enum LinkMarker: Int {
    /// The application answered an invitation this node received.
    case answered = 1
    /// An invitation this node received was not answered in time.
    case invitationExpired = 2
    /// An invitation this node made was not answered in time.
    case answerTimedOut = 3
}
