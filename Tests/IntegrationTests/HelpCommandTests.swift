import Foundation
import MeshTestSupport
import Testing

/// `--help` of every command of the real executable: every option has a description, and the
/// exit statuses are listed.
@Suite("meshchat --help", .serialized)
struct HelpCommandTests {
    /// The help text of `meshchat ARGUMENTS`.
    static func help(_ arguments: [String]) async throws -> String {
        let process = try ChatProcess(arguments, label: arguments.joined(separator: " "))
        #expect(try await process.waitForExit() == 0, "stderr: \(process.errors)")
        return process.output.joined(separator: "\n")
    }

    /// The options of the OPTIONS section with their descriptions (ArgumentParser writes a
    /// description on the option's line, or on the next lines when the option is long).
    static func options(_ text: String) -> [(option: String, description: String)] {
        let lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("OPTIONS:") }) else { return [] }
        var options: [(String, String)] = []
        var index = start + 1
        while index < lines.count, !lines[index].isEmpty || index == start + 1 {
            let line = lines[index]
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("  -") {
                let parts = trimmed.components(separatedBy: "  ").filter { !$0.isEmpty }
                var description = parts.dropFirst().joined(separator: " ").trimmingCharacters(in: .whitespaces)
                // Continuation lines are indented deeper and do not start with '-'.
                var next = index + 1
                while next < lines.count, lines[next].hasPrefix("    "), !lines[next].trimmingCharacters(in: .whitespaces).hasPrefix("-") {
                    description += " " + lines[next].trimmingCharacters(in: .whitespaces)
                    next += 1
                }
                options.append((parts.first ?? trimmed, description))
            }
            index += 1
        }
        return options
    }

    @Test("every option of every command has a description", arguments: [
        ["--help"], ["send", "--help"], ["places", "--help"], ["places", "query", "--help"],
    ])
    func everyOptionDescribed(_ arguments: [String]) async throws {
        let text = try await Self.help(arguments)
        let options = Self.options(text)
        #expect(options.count >= 1, "no options found in:\n\(text)")
        for (option, description) in options {
            #expect(!description.isEmpty, "\(option) has no description in `meshchat \(arguments.joined(separator: " "))`")
        }
    }

    @Test("the exit statuses are listed", arguments: [
        (["--help"], ["0 after /quit", "1 when the chat cannot start", "64 for a bad", "74 when standard output closed", "78 for a bad configuration file"]),
        (["send", "--help"], ["0 delivered", "67 no peer", "75 the timeout passed", "64 a bad", "78 a bad configuration file", "1 the node cannot start"]),
        (["places", "query", "--help"], ["0 (also when nothing matches)", "1 when the file cannot be read", "64 for", "74 when the answer cannot be written"]),
    ])
    func exitStatuses(_ arguments: [String], _ statuses: [String]) async throws {
        let text = try await Self.help(arguments).replacingOccurrences(of: "\n", with: " ")
            .replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        #expect(text.contains("Exit status"))
        for status in statuses {
            #expect(text.contains(status), "`meshchat \(arguments.joined(separator: " "))` does not list \"\(status)\"")
        }
    }

    @Test("the chat's help names the send command and the configuration file")
    func chatHelpNamesSendAndConfig() async throws {
        let text = try await Self.help(["--help"])
        #expect(text.contains("send"))
        #expect(text.contains("config.toml"))
        #expect(text.contains("--config <FILE>"))
    }
}
