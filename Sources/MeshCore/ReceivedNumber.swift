/// Numbers that came from outside (a packet, a file, a typed line), written for a message without
/// the trap of `Int(someDouble)` on a value out of `Int`'s range, infinite or NaN.
public enum ReceivedNumber {
    /// The number rounded to a whole one when an `Int` holds it (`1500`), else as it is
    /// (`1e+19`, `-inf`, `nan`).
    /// - Parameter value: any number.
    /// - Returns: its text.
    public static func whole(_ value: Double) -> String {
        Int(exactly: value.rounded()).map { "\($0)" } ?? "\(value)"
    }
}
