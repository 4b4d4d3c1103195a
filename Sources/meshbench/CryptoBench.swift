import ArgumentParser
import Crypto
import Foundation
import MeshLink
import MeshNoise
import MeshWire
import NIOCore

/// Single-core ceilings of the crypto and framing layers, without sockets or tasks: how fast one
/// core can seal and open 64 KiB records with swift-crypto's `ChaChaPoly`, with ``NoiseCipherState``,
/// and whole messages with ``SecureChannel`` (serialize, fragment, encrypt, frame; and back).
/// Compare with `openssl speed -evp chacha20-poly1305` on the same machine.
struct CryptoBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crypto", abstract: "Single-core seal/open ceilings (ChaChaPoly, NoiseCipherState, SecureChannel).")

    @Option(help: "Seconds per measurement.") var seconds = 1.0
    @Option(help: "Bytes per record for the ChaChaPoly and cipher-state rows.") var recordSize = 65_519
    @Option(help: "Bytes per message for the SecureChannel rows.") var messageSize = 1 << 20
    @Option(help: "Run only the rows whose label contains this text.") var only: String?

    func run() throws {
        let key = SymmetricKey(size: .bits256)
        let record = Data((0..<recordSize).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let nonce = try ChaChaPoly.Nonce(data: Data(repeating: 0, count: 12))

        report("ChaChaPoly.seal", bytes: recordSize) {
            _ = try! ChaChaPoly.seal(record, using: key, nonce: nonce)
        }
        let box = try ChaChaPoly.seal(record, using: key, nonce: nonce)
        report("ChaChaPoly.open", bytes: recordSize) {
            _ = try! ChaChaPoly.open(box, using: key)
        }

        // Both suites' AEADs (§4.11) through the Noise cipher state.
        for cipher in NoiseCipher.allCases {
            var sender = NoiseCipherState(key: key, cipher: cipher)
            report("NoiseCipherState.encrypt (\(cipher))", bytes: recordSize) {
                _ = try! sender.encrypt(record)
            }
            let ciphertext = try NoiseCipherState(key: key, cipher: cipher).encrypt(record, nonce: 0)
            let receiver = NoiseCipherState(key: key, cipher: cipher)
            report("NoiseCipherState.decrypt (\(cipher))", bytes: recordSize) {
                _ = try! receiver.decrypt(ciphertext, nonce: 0)
            }
        }

        // Whole messages through SecureChannel: envelope serialization, fragmenting, sealing.
        let keyAB = SymmetricKey(size: .bits256), keyBA = SymmetricKey(size: .bits256)
        let payload = Data((0..<messageSize).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let envelope = Envelope.data(payload)
        var a = SecureChannel(send: NoiseCipherState(key: keyAB), receive: NoiseCipherState(key: keyBA))
        var b = SecureChannel(send: NoiseCipherState(key: keyBA), receive: NoiseCipherState(key: keyAB))
        let allocator = ByteBufferAllocator()
        report("SecureChannel.seal(envelope) \(messageSize) B", bytes: messageSize) {
            var buffer = allocator.buffer(capacity: 0)
            try! a.seal(envelope, into: &buffer)
        }
        // Open: pre-seal a batch of messages with a fresh pair, then open them in order.
        a = SecureChannel(send: NoiseCipherState(key: keyAB), receive: NoiseCipherState(key: keyBA))
        let parser = FrameParser()
        var sealed: [ByteBuffer] = []
        for _ in 0..<64 {
            var buffer = allocator.buffer(capacity: 0)
            try a.seal(envelope, into: &buffer)
            sealed.append(buffer)
        }
        var index = 0
        report("SecureChannel.open + Envelope decode \(messageSize) B", bytes: messageSize) {
            if index == sealed.count {
                // Start over with a fresh receiver: the batch was sealed from nonce 0.
                b = SecureChannel(send: NoiseCipherState(key: keyBA), receive: NoiseCipherState(key: keyAB))
                index = 0
            }
            var buffer = sealed[index]
            index += 1
            while let frame = try! parser.parse(&buffer) {
                if let message = try! b.open(frame) {
                    _ = try! Envelope(decoding: message)
                }
            }
        }
    }

    private func report(_ label: String, bytes: Int, _ body: () -> Void) {
        if let only, !label.contains(only) { return }
        let (iterations, elapsed) = timeRepeatedly(for: seconds, body)
        let rate = Double(bytes * iterations) / elapsed
        let line = label.padding(toLength: 52, withPad: " ", startingAt: 0) + String(format: " %8.0f MB/s  %6.2f Gbit/s  %8.1f µs/op", rate / 1e6, rate * 8 / 1e9, elapsed / Double(iterations) * 1e6)
        print(line)
    }
}
