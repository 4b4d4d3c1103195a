import Foundation
import MeshChat
import MeshChatKit
import MeshTransport

extension MeshFuzz {
    /// The chat's control socket (README "Beside a running chat"): the byte stream split into
    /// bounded lines as the server splits it, each line parsed as a request. A request accepted
    /// must be within every bound the protocol states.
    @Sendable static func fuzzControl(_ bytes: [UInt8]) {
        var lines = LineSplitter(maxLineBytes: 4_096)
        for piece in lines.append(bytes).prefix(64) {
            guard case .line(let line) = piece, case .success(.send(let target, let text)) = ControlProtocol.parse(line) else { continue }
            precondition(!text.isEmpty && text.utf8.count <= ChatLimits.maxLineBytes, "an accepted text is out of bounds")
            switch target {
            case .typed:
                break
            case .peer(let name), .room(let name):
                precondition(!name.isEmpty && name.utf8.count <= ControlProtocol.maxTargetBytes, "an accepted target is out of bounds")
                precondition(!name.unicodeScalars.contains { $0.properties.isWhitespace }, "an accepted target has whitespace")
            }
        }
    }
}
