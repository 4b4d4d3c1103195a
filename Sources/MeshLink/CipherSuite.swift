import MeshNoise
import MeshWire

#if canImport(Glibc)
import Glibc
#endif

/// A link cipher suite: the Noise protocol a handshake runs and every TCP record and UDP datagram
/// of the link is sealed with afterwards (PROTOCOL.md §4.11).
///
/// ChaChaPoly is mandatory: every node offers it. AESGCM is offered by default only by a node with
/// hardware AES (``hardwareAESAvailable``), so it is chosen only when both ends have it.
public enum CipherSuite: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `Noise_XX_25519_ChaChaPoly_SHA256`, id 1: mandatory.
    case chaChaPoly = 1
    /// `Noise_XX_25519_AESGCM_SHA256`, id 2: AES-256-GCM, for ends with hardware AES.
    case aesGCM = 2

    /// The Noise protocol name of the link handshake (§4.1).
    public var noiseProtocol: String { "Noise_XX_25519_\(cipher.rawValue)_SHA256" }

    /// The Noise cipher function.
    public var cipher: NoiseCipher {
        switch self {
        case .chaChaPoly: .chaChaPoly
        case .aesGCM: .aesGCM
        }
    }

    /// The suite's name as PROTOCOL.md spells it: `ChaChaPoly` or `AESGCM`.
    public var description: String { cipher.rawValue }

    /// Reads a suite name as `MESHCHAT_SUITES` and the configuration spell it (case-insensitive):
    /// `chachapoly` or `aesgcm`.
    /// - Parameter name: the name.
    public init?(name: some StringProtocol) {
        switch name.lowercased() {
        case "chachapoly": self = .chaChaPoly
        case "aesgcm": self = .aesGCM
        default: return nil
        }
    }

    // MARK: Negotiation (§4.11)

    /// The suite a link between two offers uses: the initiator's most preferred suite that the
    /// responder also offers, or `nil` when they share none (never, between conforming nodes:
    /// both offer ChaChaPoly).
    /// - Parameters:
    ///   - initiator: the initiator's offer, most preferred first.
    ///   - responder: the responder's offer (its order does not matter).
    /// - Returns: the selected suite.
    public static func select(initiator: [CipherSuite], responder: [CipherSuite]) -> CipherSuite? {
        initiator.first { responder.contains($0) }
    }

    /// Decodes an offer received from a peer (`Hello.suites`, `HandshakeIdentity.suites`).
    ///
    /// At most ``WireLimits/maxOfferedSuites`` ids; an id listed twice, or an offer without
    /// ChaChaPoly, is refused; unknown ids (a newer peer's suites) are skipped.
    /// - Parameter ids: the ids as received.
    /// - Returns: the known suites in the peer's order.
    /// - Throws: ``LinkCloseReason`` with `protocolViolation`, naming the problem.
    public static func offer(decoding ids: [UInt32]) throws(LinkCloseReason) -> [CipherSuite] {
        guard ids.count <= WireLimits.maxOfferedSuites else {
            throw LinkCloseReason(.protocolViolation,
                "cipher suite offer of \(ids.count) ids exceeds the maximum \(WireLimits.maxOfferedSuites)")
        }
        var seen = Set<UInt32>()
        var suites: [CipherSuite] = []
        for id in ids {
            guard seen.insert(id).inserted else {
                throw LinkCloseReason(.protocolViolation, "cipher suite \(id) is offered twice")
            }
            if let suite = UInt8(exactly: id).flatMap(CipherSuite.init(rawValue:)) { suites.append(suite) }
        }
        guard suites.contains(.chaChaPoly) else {
            throw LinkCloseReason(.protocolViolation, "cipher suite offer lacks the mandatory ChaChaPoly (1)")
        }
        return suites
    }

    /// Makes a local offer well formed: the given order without repeats, ChaChaPoly appended when
    /// missing (it is mandatory).
    /// - Parameter suites: the suites in preference order.
    /// - Returns: the offer.
    public static func normalizedOffer(_ suites: [CipherSuite]) -> [CipherSuite] {
        var offer: [CipherSuite] = []
        for suite in suites where !offer.contains(suite) { offer.append(suite) }
        if !offer.contains(.chaChaPoly) { offer.append(.chaChaPoly) }
        return offer
    }

    // MARK: This machine

    /// The offer of a node that is not configured otherwise: `MESHCHAT_SUITES` when set (a comma-
    /// separated list of suite names, most preferred first; unknown names are skipped), else
    /// AESGCM then ChaChaPoly with hardware AES and ChaChaPoly alone without.
    public static let localOffer: [CipherSuite] = {
        if let value = getenv("MESHCHAT_SUITES").map({ String(cString: $0) }), !value.isEmpty {
            return normalizedOffer(value.split(separator: ",").compactMap { CipherSuite(name: $0.trimmingSpaces) })
        }
        return hardwareAESAvailable ? [.aesGCM, .chaChaPoly] : [.chaChaPoly]
    }()

    /// Whether this CPU has hardware AES: on x86-64 the `aes` (AES-NI) and `pclmulqdq` flags of
    /// /proc/cpuinfo (CPUID leaf 1, ECX bits 25 and 1), on aarch64 `HWCAP_AES` (and `HWCAP_PMULL`)
    /// from `getauxval(AT_HWCAP)`; `false` elsewhere or when it cannot be told.
    public static let hardwareAESAvailable: Bool = {
        #if arch(x86_64) && os(Linux)
        guard let flags = cpuinfoFlags() else { return false }
        return flags.contains("aes") && flags.contains("pclmulqdq")
        #elseif arch(arm64) && os(Linux)
        let hwcap = getauxval(UInt(AT_HWCAP))
        let aes: UInt = 1 << 3, pmull: UInt = 1 << 4  // HWCAP_AES, HWCAP_PMULL (asm/hwcap.h)
        return hwcap & aes != 0 && hwcap & pmull != 0
        #else
        return false
        #endif
    }()

    #if arch(x86_64) && os(Linux)
    /// The words of the first `flags` line of /proc/cpuinfo (at most 64 KiB of it is read).
    private static func cpuinfoFlags() -> Set<Substring>? {
        guard let file = fopen("/proc/cpuinfo", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 16_384)
        var read = 0
        while read < 65_536, fgets(&line, Int32(line.count), file) != nil {
            let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            read += text.utf8.count
            guard text.hasPrefix("flags") else { continue }
            guard let colon = text.firstIndex(of: ":") else { return nil }
            return Set(text[text.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }))
        }
        return nil
    }
    #endif
}

extension Substring {
    /// The substring without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
