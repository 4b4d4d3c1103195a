/// A parsed Noise protocol name such as `Noise_XXpsk3_25519_ChaChaPoly_SHA256` (revision 34, §8).
///
/// The name has five underscore-separated parts: the `Noise` prefix, the handshake pattern with
/// its modifiers, the DH function, the cipher function and the hash function. This module
/// implements DH `25519`, ciphers `ChaChaPoly` and `AESGCM`, and hash `SHA256`; any other choice is rejected
/// with ``NoiseError/Code/unsupportedProtocol``, as are unknown patterns and modifiers other than
/// `pskN` (e.g. `fallback`). Cipher `AESGCM` (AES-256-GCM, §12.4) is implemented too.
///
/// The full name is what ``NoiseHandshake`` hashes into its initial state, so two peers must use
/// byte-identical names.
public struct NoiseProtocolName: Sendable, Hashable, CustomStringConvertible {
    /// The full protocol name as given, e.g. `Noise_XXpsk3_25519_ChaChaPoly_SHA256`.
    public let rawValue: String
    /// The base pattern name without modifiers, e.g. `XX`.
    public let patternName: String
    /// The pattern modifiers in name order, e.g. `["psk3"]` (empty when there are none).
    public let modifiers: [String]
    /// The psk positions of the modifiers, e.g. `[3]` for `psk3`.
    public let pskPositions: [Int]
    /// The handshake pattern with all modifiers applied.
    public let pattern: NoiseHandshakePattern
    /// The DH function name; always `25519`.
    public let dhFunction: String
    /// The cipher function name: `ChaChaPoly` or `AESGCM`.
    public let cipherFunction: String
    /// The cipher function.
    public let cipher: NoiseCipher
    /// The hash function name; always `SHA256`.
    public let hashFunction: String

    /// The full protocol name.
    public var description: String { rawValue }

    /// Parses a full Noise protocol name.
    ///
    /// - Parameter name: A name like `Noise_XX_25519_ChaChaPoly_SHA256` or
    ///   `Noise_NNpsk0+psk2_25519_ChaChaPoly_SHA256`.
    /// - Throws: ``NoiseError/Code/unsupportedProtocol`` when the name is malformed, or names a
    ///   pattern, modifier, DH, cipher or hash function this module does not implement.
    public init(_ name: String) throws(NoiseError) {
        let parts = name.split(separator: "_", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, parts[0] == "Noise" else {
            throw .unsupportedProtocol(name, "expected Noise_<pattern>_<dh>_<cipher>_<hash>")
        }
        guard parts[2] == "25519" else {
            throw .unsupportedProtocol(name, "DH function \"\(parts[2])\" is not supported (only 25519)")
        }
        guard let cipher = NoiseCipher(rawValue: parts[3]) else {
            throw .unsupportedProtocol(name, "cipher \"\(parts[3])\" is not supported (only ChaChaPoly and AESGCM)")
        }
        guard parts[4] == "SHA256" else {
            throw .unsupportedProtocol(name, "hash \"\(parts[4])\" is not supported (only SHA256)")
        }

        // The base pattern is upper-case letters and digits; modifiers start at the first lower-case letter.
        let patternPart = parts[1]
        let base = String(patternPart.prefix { $0.isUppercase || $0.isNumber })
        guard let basePattern = NoiseHandshakePattern.named(base) else {
            throw .unsupportedProtocol(name, "handshake pattern \"\(base)\" is not supported")
        }
        let modifierPart = patternPart.dropFirst(base.count)
        let modifiers =
            modifierPart.isEmpty
            ? [] : modifierPart.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        var positions: [Int] = []
        for modifier in modifiers {
            guard modifier.hasPrefix("psk"), let position = Int(modifier.dropFirst(3)), position >= 0,
                String(position) == modifier.dropFirst(3)
            else {
                throw .unsupportedProtocol(name, "modifier \"\(modifier)\" is not supported (only pskN)")
            }
            guard !positions.contains(position) else {
                throw .unsupportedProtocol(name, "modifier \"\(modifier)\" appears twice")
            }
            positions.append(position)
        }

        self.rawValue = name
        self.patternName = base
        self.modifiers = modifiers
        self.pskPositions = positions
        self.pattern = try basePattern.applyingPSKModifiers(positions)
        self.dhFunction = parts[2]
        self.cipherFunction = parts[3]
        self.cipher = cipher
        self.hashFunction = parts[4]
    }

    /// Builds the name for a supported base pattern and psk positions with this module's
    /// primitives, e.g. `("XX", [3])` → `Noise_XXpsk3_25519_ChaChaPoly_SHA256`.
    ///
    /// - Parameters:
    ///   - patternName: A base pattern name from ``NoiseHandshakePattern/all``.
    ///   - pskPositions: psk modifier positions, in order.
    /// - Returns: The parsed name.
    /// - Throws: ``NoiseError/Code/unsupportedProtocol`` for an unknown pattern or bad position.
    public static func with25519ChaChaPolySHA256(
        pattern patternName: String,
        pskPositions: [Int] = []
    ) throws(NoiseError) -> NoiseProtocolName {
        let modifiers = pskPositions.map { "psk\($0)" }.joined(separator: "+")
        return try NoiseProtocolName("Noise_\(patternName)\(modifiers)_25519_ChaChaPoly_SHA256")
    }
}
