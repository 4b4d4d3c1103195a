import struct Foundation.Data
import Logging
import MeshLink
import MeshTransport
import MeshWire
import NIOConcurrencyHelpers
import NIOCore

/// A peer that has proved its identity and waits for the application's trust decision
/// (Multipeer's `session(_:didReceiveCertificate:fromPeer:certificateHandler:)`, PROTOCOL.md §4.9).
///
/// This type is thread-safe (a value).
public struct PeerIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The peer: its node id (derived from ``identityKey``) and the display name it announced.
    public let peer: PeerID
    /// The peer's Ed25519 identity public key (32 raw bytes), proved by the handshake.
    public let identityKey: Data
    /// The remote address of the link, e.g. `192.0.2.7:7000`, when known.
    public let remoteAddress: String?
    /// Whether this node dialled the link (`false`: the peer dialled this node).
    public let isDialled: Bool

    /// `name (id prefix) at address`.
    public var description: String { "\(peer) at \(remoteAddress ?? "?")" }
}

extension Session {
    /// The longest a session waits for ``Configuration/admitPeer``: 4.5 s, so that both ends'
    /// decisions fit in the 10 s handshake deadline (PROTOCOL.md §4.5, §4.9).
    public static let maxAdmissionTimeout: Duration = .milliseconds(4_500)

    /// The admission decider for the transport, or `nil` when every peer is admitted.
    var linkAdmission: LinkAdmission? {
        guard configuration.admitPeer != nil else { return nil }
        return { [weak self] request, loop in
            guard let self else { return loop.makeSucceededFuture(.refuse(.normal, reason: "the session stopped")) }
            return self.decideAdmission(request, on: loop)
        }
    }

    /// Asks the application's hook about a peer, bounded by ``Configuration/admissionTimeout``.
    ///
    /// The hook is application code that may never return, so it runs in a task of its own that
    /// nothing waits for: at the timeout the link is refused and the task cancelled; the event
    /// loop never waits.
    private func decideAdmission(_ request: AdmissionRequest, on loop: any EventLoop) -> EventLoopFuture<AdmissionDecision> {
        guard let hook = configuration.admitPeer else { return loop.makeSucceededFuture(.admit) }
        let peer = PeerID(remote: request.peer)
        let identity = PeerIdentity(peer: peer, identityKey: request.peer.identityKey,
                                    remoteAddress: request.remoteAddress.map(Self.format),
                                    isDialled: request.role == .initiator)
        let me = localID.shortHex
        let timeout = Self.admissionTimeout(configuration.admissionTimeout)
        let promise = loop.makePromise(of: AdmissionDecision.self)
        let decided = NIOLockedValueBox(false)
        let logger = self.logger
        let complete: @Sendable (AdmissionDecision) -> Void = { decision in
            guard decided.withLockedValue({ done in defer { done = true }; return !done }) else { return }
            if case .refuse(_, let reason) = decision {
                logger.debug("peer not admitted", metadata: ["mesh.peer": "\(peer.id)", "link.reason": "\(reason)"])
            }
            promise.succeed(decision)
        }
        let task = Task {
            let admitted = await hook(identity)
            complete(admitted ? .admit : .refuse(.notAdmitted, reason: "node \(me) did not admit node \(peer.id.shortHex) (its trust policy)"))
        }
        let timer = loop.scheduleTask(in: .nanoseconds(Self.nanoseconds(timeout))) {
            // Decided before the task is cancelled: a hook that returns when cancelled must not admit.
            complete(.refuse(.notAdmitted, reason: "node \(me) did not decide within \(timeout) whether to admit node \(peer.id.shortHex)"))
            task.cancel()
        }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        return promise.futureResult
    }

    /// A timeout clamped to 1 ms…``maxAdmissionTimeout``.
    static func admissionTimeout(_ requested: Duration) -> Duration {
        min(max(requested, .milliseconds(1)), maxAdmissionTimeout)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 { SessionClock.nanoseconds(duration) }
}
