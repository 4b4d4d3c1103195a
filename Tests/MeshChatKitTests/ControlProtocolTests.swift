import Foundation
import MeshChat
import MeshChatKit
import Testing

/// The control socket's requests as an adversary writes them: every member checked, nothing sent
/// for a request that is not exactly right.
@Suite("control protocol")
struct ControlProtocolTests {
    static func parse(_ text: String) -> Result<ControlProtocol.Request, ControlError> {
        ControlProtocol.parse(Array(text.utf8))
    }

    static func error(_ text: String) -> String? {
        if case .failure(let error) = parse(text) { return error.description }
        return nil
    }

    @Test("a send to a peer, a room, and where typed lines go")
    func targets() throws {
        #expect(try Self.parse(#"{"op":"send","to":"@carol","text":"hi"}"#).get() == .send(target: .peer("carol"), text: "hi"))
        #expect(try Self.parse(#"{"op":"send","to":"3fa9","text":"hi"}"#).get() == .send(target: .peer("3fa9"), text: "hi"))
        #expect(try Self.parse(##"{"text":"hé \n","to":"#dev","op":"send"}"##).get() == .send(target: .room("#dev"), text: "hé \n"))
        #expect(try Self.parse(#"{"op":"send","text":"to all"}"#).get() == .send(target: .typed, text: "to all"))
    }

    @Test("malformed requests are refused with a reason", arguments: [
        ("", "not a JSON object"),
        ("[1,2]", "not a JSON object"),
        ("{\"op\":\"send\",\"text\":\"x\"", "not a JSON object"),
        (#"{"op":"send","text":"x","extra":1}"#, "unknown member \"extra\""),
        (#"{"text":"x"}"#, "\"op\" is missing"),
        (#"{"op":"delete","text":"x"}"#, "unknown op \"delete\""),
        (#"{"op":"send"}"#, "\"text\" is missing"),
        (#"{"op":"send","text":5}"#, "\"text\" is missing or not a string"),
        (#"{"op":"send","text":""}"#, "the text is 0 bytes"),
        (#"{"op":"send","text":"x","to":7}"#, "\"to\" is not a string"),
        (#"{"op":"send","text":"x","to":"@"}"#, "\"to\" must be"),
        (#"{"op":"send","text":"x","to":"a b"}"#, "\"to\" must be"),
        (#"{"op":"send","text":"x","to":"a\u0000b"}"#, "\"to\" must be"),
        (#"{"op":"send","text":"x","to":null}"#, "\"to\" is not a string"),
    ])
    func malformed(request: String, reason: String) {
        let message = Self.error(request)
        #expect(message?.contains(reason) == true, "\(request): \(message ?? "accepted")")
    }

    @Test("the text and the line are bounded")
    func bounds() {
        let longest = String(repeating: "a", count: ChatLimits.maxLineBytes)
        #expect((try? Self.parse(#"{"op":"send","text":"\#(longest)"}"#).get()) != nil)
        #expect(Self.error(#"{"op":"send","text":"\#(longest)a"}"#)?.contains("send 1 to \(ChatLimits.maxLineBytes) bytes") == true)
        #expect(Self.error(#"{"op":"send","text":"x","to":"\#(String(repeating: "b", count: 101))"}"#)?.contains("\"to\" must be") == true)
        let huge = Array(repeating: UInt8(ascii: " "), count: ControlProtocol.maxRequestBytes + 1)
        if case .failure(let error) = ControlProtocol.parse(huge) {
            #expect(error.description.contains("over \(ControlProtocol.maxRequestBytes) bytes"))
        } else {
            Issue.record("an oversized request was accepted")
        }
        // Deep nesting is refused, not a crash.
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(Self.error(deep) != nil)
    }

    @Test("replies are one JSON object each")
    func replies() {
        #expect(ControlProtocol.stored(id: "abc", status: "queued", to: (id: "00ff", name: "carol"), room: nil)
                == #"{"ok":true,"id":"abc","status":"queued","stored":true,"to":{"id":"00ff","name":"carol"},"private":true}"#)
        #expect(ControlProtocol.stored(id: "abc", status: "sent", to: nil, room: "#dev")
                == ##"{"ok":true,"id":"abc","status":"sent","stored":true,"room":"#dev","private":false}"##)
        #expect(ControlProtocol.error("say \"why\"", code: .unknownPeer) == #"{"error":"say \"why\"","code":"unknownPeer"}"#)
    }
}
