import Foundation
import MeshTestSupport
import Testing

/// `meshchat --generate-completion-script`: the scripts `scripts/install` installs complete the
/// subcommands that have roots of their own (send, relay, places, rotate-key) and their options.
@Suite("shell completion scripts")
struct CompletionScriptTests {
    static let meshchat = ChatProcess.binDirectory.appendingPathComponent("meshchat").path

    @Test("bash, zsh and fish scripts name send, relay, places and rotate-key, with options of each, beside the chat's own", arguments: ["bash", "zsh", "fish"])
    func subcommands(shell: String) throws {
        let result = try Command.run([Self.meshchat, "--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.output)")
        let script = result.output
        for word in ["send", "relay", "places", "rotate-key", "query"] {
            #expect(script.contains(word), "\(shell): no \(word)")
        }
        // An option of each: send's --to and --timeout, places query's --data, rotate-key's --config; the chat's --json.
        for option in ["to", "timeout", "data", "config", "json", "data-dir"] {
            #expect(script.contains("--\(option)") || script.contains("-l \(option)") || script.contains("'\(option)'"), "\(shell): no --\(option)")
        }
    }

    @Test("without the option the chat's root still has no subcommands: meshchat send's help is send's own, and the chat's help lists none")
    func behaviourUnchanged() throws {
        let help = try Command.run([Self.meshchat, "--help"])
        #expect(help.status == 0)
        #expect(!help.output.contains("SUBCOMMANDS"), "\(help.output)")
        let send = try Command.run([Self.meshchat, "send", "--help"])
        #expect(send.output.contains("--to"), "\(send.output)")
    }
}
