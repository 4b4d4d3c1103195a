import MeshCore
import Testing

/// Numbers from outside, written without trapping.
@Suite("ReceivedNumber")
struct ReceivedNumberTests {
    @Test("whole numbers in Int's range are rounded and printed as integers", arguments: [
        (1500.0, "1500"), (1499.6, "1500"), (-2.4, "-2"), (0.0, "0"), (-0.0, "0"),
    ])
    func whole(value: Double, text: String) {
        #expect(ReceivedNumber.whole(value) == text)
    }

    @Test("values an Int cannot hold are printed as they are, not trapped on", arguments: [
        1e19, -1e19, Double.infinity, -Double.infinity, Double.nan, Double.greatestFiniteMagnitude,
    ])
    func outOfRange(value: Double) {
        #expect(ReceivedNumber.whole(value) == "\(value)")
    }
}
