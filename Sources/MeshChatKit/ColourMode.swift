/// Whether and how richly output is coloured (pure; the environment is passed in).
///
/// Colour is used only on a terminal, and never when `NO_COLOR` is set to a non-empty value
/// (https://no-color.org) or `TERM` is `dumb`. Terminals that announce 256 colours (`TERM`
/// containing `256color` or `direct`, or any `COLORTERM`) get ``extended``, others ``basic``.
public enum ColourMode: Sendable, Hashable {
    /// No escape sequences at all.
    case none
    /// The eight standard ANSI colours, bold and dim (SGR 30–37, 1, 2).
    case basic
    /// The 256-colour palette as well (SGR 38;5;N).
    case extended

    /// The mode for an output stream.
    /// - Parameters:
    ///   - isTerminal: whether the stream is a terminal (`isatty`).
    ///   - environment: the process environment (`NO_COLOR`, `TERM`, `COLORTERM`).
    /// - Returns: the mode.
    public static func detect(isTerminal: Bool, environment: [String: String]) -> ColourMode {
        guard isTerminal else { return .none }
        if let noColour = environment["NO_COLOR"], !noColour.isEmpty { return .none }
        let term = environment["TERM"] ?? ""
        if term == "dumb" { return .none }
        if term.contains("256color") || term.contains("direct") || !(environment["COLORTERM"] ?? "").isEmpty {
            return .extended
        }
        return .basic
    }

    /// Whether any colour is used.
    public var isEnabled: Bool { self != .none }
}
