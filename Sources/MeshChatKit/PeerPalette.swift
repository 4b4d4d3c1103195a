/// A stable colour for each peer, from its node id (pure).
///
/// The colour depends only on the id (FNV-1a of its hex digits, modulo the palette), so a peer
/// has the same colour in every session and on every machine, whatever its display name. The
/// palettes hold mid-tone colours that read on dark and light backgrounds alike: no black, white,
/// grey or pale yellow, and no red, which is kept for errors.
public enum PeerPalette {
    /// 256-colour indices (``ColourMode/extended``): orange, ochre, olive green, green, teal,
    /// sea green, azure, slate blue, purple, orchid, pink, rust.
    public static let extended: [Int] = [173, 136, 70, 35, 37, 29, 32, 62, 134, 133, 169, 130]
    /// Standard ANSI foreground codes (``ColourMode/basic``): green, yellow, blue, magenta, cyan.
    public static let basic: [Int] = [32, 33, 34, 35, 36]

    /// The palette slot of a peer.
    /// - Parameters:
    ///   - id: the peer's node id in hex.
    ///   - count: the palette's size.
    /// - Returns: 0 ..< `count`.
    public static func slot(forPeer id: String, count: Int) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in id.lowercased().utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return Int(hash % UInt32(max(count, 1)))
    }

    /// The SGR parameters that colour a peer's name.
    /// - Parameters:
    ///   - id: the peer's node id in hex.
    ///   - mode: the colour mode.
    /// - Returns: e.g. `"38;5;173"` or `"36"`; `nil` without colour.
    public static func sgr(forPeer id: String, mode: ColourMode) -> String? {
        switch mode {
        case .none: nil
        case .basic: String(basic[slot(forPeer: id, count: basic.count)])
        case .extended: "38;5;\(extended[slot(forPeer: id, count: extended.count)])"
        }
    }
}
