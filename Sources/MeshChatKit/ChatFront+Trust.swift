import MeshSession

extension ChatFront {
    /// `/verify @peer`: the safety number with a reachable peer whose identity key this node holds.
    func verify(_ target: String) {
        switch PeerLookup.match(target, in: session.reachablePeers.map(\.peer), noun: "reachable peer") {
        case .failure(let message):
            emit(.error("/verify: \(message)"))
        case .success(let peer):
            guard let number = session.safetyNumber(with: peer),
                  let theirs = session.identityKey(of: peer).flatMap(SafetyNumber.half(rawKey:)),
                  let mine = session.identityKey(of: session.peer.peerID).flatMap(SafetyNumber.half(rawKey:)) else {
                emit(.error("/verify: \(peer.displayName)'s identity key has not arrived yet (its advert or a link brings it)"))
                return
            }
            emit(.verify(peer, number, mine: mine, theirs: theirs))
        }
    }
}
