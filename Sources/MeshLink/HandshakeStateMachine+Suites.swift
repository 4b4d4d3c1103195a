import struct Foundation.Data
import MeshNoise
import MeshWire
import NIOCore

/// Cipher suite negotiation (PROTOCOL.md §4.11): the hello's offer, the responder's RETRY, and
/// the initiator's check of message 2.
extension HandshakeStateMachine {
    /// What the responder does with a hello's suites.
    enum SuiteDecision {
        /// Read message 1 with this suite and answer.
        case use(CipherSuite)
        /// Ask the initiator to write message 1 again: send this RETRY frame.
        case retry(Frame)
        /// Refuse the handshake.
        case fail(LinkCloseReason)
    }

    /// Writes message 1 with the current ``suite``, listing the whole offer (initiator only).
    mutating func writeMessage1() -> Action {
        var hello = HelloPayload()
        hello.protocolVersion = Self.protocolVersion
        hello.serviceType = configuration.serviceType
        hello.suites = offer.map { UInt32($0.rawValue) }
        hello.suite = UInt32(suite.rawValue)
        hello.retryOf = retry.map { UInt32($0.from.rawValue) } ?? 0
        do {
            let message = try writeNoise(hello.encoded)
            state = .awaitingMessage2
            return .send(Frame(type: .handshake, body: ByteBuffer(bytes: message)))
        } catch {
            return fail(.handshakeFailed, "could not write handshake message 1: \(error)", tell: false)
        }
    }

    /// Writes the next Noise message of the current attempt.
    mutating func writeNoise(_ payload: Data) throws -> Data {
        guard var noise else { throw LinkCloseReason(.handshakeFailed, "no Noise state") }
        let message = try noise.writeMessage(payload: payload)
        self.noise = noise
        return message
    }

    /// The initiator got a RETRY: once per connection, to a suite it offered and is not using,
    /// it writes message 1 again with that suite and a fresh ephemeral key, the retry bound into
    /// the prologue. Anything else is a downgrade attempt or a broken peer.
    mutating func receivedRetry(_ frame: Frame) -> Action {
        let id: UInt8
        do {
            id = try frame.retrySuite()
        } catch {
            return fail(.protocolViolation, "\(error)")
        }
        if let retry {
            return fail(.suiteDowngrade,
                "the responder sent a second RETRY (suite \(id)) after this node retried \(retry.from) with \(retry.to)")
        }
        guard let to = CipherSuite(rawValue: id), offer.contains(to) else {
            return fail(.suiteDowngrade, "RETRY asks for cipher suite \(id), which this node did not offer")
        }
        guard to != suite else {
            return fail(.suiteDowngrade, "RETRY asks for \(to), the suite message 1 already used")
        }
        let from = suite
        do {
            noise = try Self.makeNoise(to, role: role, configuration: configuration, retry: (from, to), ephemeralKey: retryEphemeralKey)
        } catch {
            return fail(.handshakeFailed, "could not restart the handshake with \(to): \(error)", tell: false)
        }
        retry = (from, to)
        suite = to
        return writeMessage1()
    }

    /// The responder's decision on a hello whose version and service type matched.
    mutating func respondingSuite(to hello: HelloPayload) -> SuiteDecision {
        let offered: [CipherSuite]
        do {
            offered = try CipherSuite.offer(decoding: hello.suites)
        } catch {
            return .fail(error)
        }
        guard let used = UInt8(exactly: hello.suite).flatMap(CipherSuite.init(rawValue:)), offered.contains(used) else {
            return .fail(LinkCloseReason(.protocolViolation,
                "handshake message 1 is written with cipher suite \(hello.suite), which its hello does not offer"))
        }
        // Both offers hold ChaChaPoly (offer(decoding:) and normalizedOffer make sure).
        let selected = CipherSuite.select(initiator: offered, responder: offer) ?? .chaChaPoly
        if hello.retryOf != 0 {
            guard let retry, UInt32(retry.from.rawValue) == hello.retryOf, retry.to == used else {
                return .fail(LinkCloseReason(.suiteDowngrade,
                    "message 1 follows a RETRY from cipher suite \(hello.retryOf) that this node never sent"))
            }
        } else if retry != nil {
            return .fail(LinkCloseReason(.protocolViolation, "message 1 was not written again after this node's RETRY"))
        }
        guard used == selected else {
            if retry != nil {
                return .fail(LinkCloseReason(.suiteDowngrade,
                    "message 1 was written again with \(used), but the offers select \(selected)"))
            }
            retry = (used, selected)
            return .retry(Frame.retry(suite: selected.rawValue))
        }
        return .use(used)
    }

    /// The initiator's check of message 2: the suite in use must be the one its offer and the
    /// responder's select. `nil` when it is.
    func checkSuite(responderOffer ids: [UInt32]) -> LinkCloseReason? {
        guard role == .initiator else { return nil }
        let theirs: [CipherSuite]
        do {
            theirs = try CipherSuite.offer(decoding: ids)
        } catch {
            return LinkCloseReason(error.code, "the responder's suites in message 2: \(error.message)")
        }
        let selected = CipherSuite.select(initiator: offer, responder: theirs) ?? .chaChaPoly
        guard selected == suite else {
            return LinkCloseReason(.suiteDowngrade,
                "the responder offers \(theirs.map(\.description).joined(separator: ", ")), so the link must use \(selected), but the handshake ran \(suite)")
        }
        return nil
    }
}
