// The pattern table, transcribed from the Noise Protocol Framework revision 34:
// §7.4 (one-way), §7.5 (interactive fundamental) and §18.2 (deferred patterns).
// Every entry is checked byte for byte against the cacophony vectors in MeshNoiseTests.

extension NoiseHandshakePattern {
    /// The one-way (§7.4) and interactive (§7.5) fundamental patterns.
    public static let fundamental: [NoiseHandshakePattern] = [
        // One-way.
        .init(name: "N", responderPreMessage: [.s], messages: [[.e, .es]]),
        .init(name: "K", initiatorPreMessage: [.s], responderPreMessage: [.s], messages: [[.e, .es, .ss]]),
        .init(name: "X", responderPreMessage: [.s], messages: [[.e, .es, .s, .ss]]),
        // Interactive.
        .init(name: "NN", messages: [[.e], [.e, .ee]]),
        .init(name: "NK", responderPreMessage: [.s], messages: [[.e, .es], [.e, .ee]]),
        .init(name: "NX", messages: [[.e], [.e, .ee, .s, .es]]),
        .init(name: "XN", messages: [[.e], [.e, .ee], [.s, .se]]),
        .init(name: "XK", responderPreMessage: [.s], messages: [[.e, .es], [.e, .ee], [.s, .se]]),
        .init(name: "XX", messages: [[.e], [.e, .ee, .s, .es], [.s, .se]]),
        .init(name: "KN", initiatorPreMessage: [.s], messages: [[.e], [.e, .ee, .se]]),
        .init(
            name: "KK", initiatorPreMessage: [.s], responderPreMessage: [.s],
            messages: [[.e, .es, .ss], [.e, .ee, .se]]
        ),
        .init(name: "KX", initiatorPreMessage: [.s], messages: [[.e], [.e, .ee, .se, .s, .es]]),
        .init(name: "IN", messages: [[.e, .s], [.e, .ee, .se]]),
        .init(name: "IK", responderPreMessage: [.s], messages: [[.e, .es, .s, .ss], [.e, .ee, .se]]),
        .init(name: "IX", messages: [[.e, .s], [.e, .ee, .se, .s, .es]]),
    ]

    /// The deferred patterns (§18.2): a `1` defers the DH involving that side's static key.
    public static let deferred: [NoiseHandshakePattern] = [
        .init(name: "NK1", responderPreMessage: [.s], messages: [[.e], [.e, .ee, .es]]),
        .init(name: "NX1", messages: [[.e], [.e, .ee, .s], [.es]]),
        .init(name: "X1N", messages: [[.e], [.e, .ee], [.s], [.se]]),
        .init(name: "X1K", responderPreMessage: [.s], messages: [[.e, .es], [.e, .ee], [.s], [.se]]),
        .init(name: "XK1", responderPreMessage: [.s], messages: [[.e], [.e, .ee, .es], [.s, .se]]),
        .init(name: "X1K1", responderPreMessage: [.s], messages: [[.e], [.e, .ee, .es], [.s], [.se]]),
        .init(name: "X1X", messages: [[.e], [.e, .ee, .s, .es], [.s], [.se]]),
        .init(name: "XX1", messages: [[.e], [.e, .ee, .s], [.es, .s, .se]]),
        .init(name: "X1X1", messages: [[.e], [.e, .ee, .s], [.es, .s], [.se]]),
        .init(name: "K1N", initiatorPreMessage: [.s], messages: [[.e], [.e, .ee], [.se]]),
        .init(
            name: "K1K", initiatorPreMessage: [.s], responderPreMessage: [.s],
            messages: [[.e, .es], [.e, .ee], [.se]]
        ),
        .init(
            name: "KK1", initiatorPreMessage: [.s], responderPreMessage: [.s],
            messages: [[.e], [.e, .ee, .se, .es]]
        ),
        .init(
            name: "K1K1", initiatorPreMessage: [.s], responderPreMessage: [.s],
            messages: [[.e], [.e, .ee, .es], [.se]]
        ),
        .init(name: "K1X", initiatorPreMessage: [.s], messages: [[.e], [.e, .ee, .s, .es], [.se]]),
        .init(name: "KX1", initiatorPreMessage: [.s], messages: [[.e], [.e, .ee, .se, .s], [.es]]),
        .init(name: "K1X1", initiatorPreMessage: [.s], messages: [[.e], [.e, .ee, .s], [.se, .es]]),
        .init(name: "I1N", messages: [[.e, .s], [.e, .ee], [.se]]),
        .init(name: "I1K", responderPreMessage: [.s], messages: [[.e, .es, .s], [.e, .ee], [.se]]),
        .init(name: "IK1", responderPreMessage: [.s], messages: [[.e, .s], [.e, .ee, .se, .es]]),
        .init(name: "I1K1", responderPreMessage: [.s], messages: [[.e, .s], [.e, .ee, .es], [.se]]),
        .init(name: "I1X", messages: [[.e, .s], [.e, .ee, .s, .es], [.se]]),
        .init(name: "IX1", messages: [[.e, .s], [.e, .ee, .se, .s], [.es]]),
        .init(name: "I1X1", messages: [[.e, .s], [.e, .ee, .s], [.se, .es]]),
    ]
}
