import Foundation
import MeshTestSupport
import Testing

/// The configuration file as the real `meshchat` reads it: from `$XDG_CONFIG_HOME` (a temporary
/// directory of the test's, never the user's) or `--config`, overridden by the command line.
@Suite("meshchat configuration file", .serialized)
struct ConfigFileCommandTests {
    /// A configuration home holding `meshchat/config.toml` with `text`.
    static func configHome(_ text: String, in directory: TemporaryDirectory) throws -> String {
        let home = directory.appending("config")
        try FileManager.default.createDirectory(atPath: home + "/meshchat", withIntermediateDirectories: true)
        try text.write(toFile: home + "/meshchat/config.toml", atomically: true, encoding: .utf8)
        return home
    }

    static func chat(_ arguments: [String], home: String, in directory: TemporaryDirectory) throws -> ChatProcess {
        try ChatProcess(["--json", "--data-dir", directory.appending("node")] + arguments, label: "chat",
                        environment: ["XDG_CONFIG_HOME": home])
    }

    @Test("the default file's settings are used: name, discovery, location as /here's default")
    func fileIsRead() async throws {
        let directory = TemporaryDirectory()
        let home = try Self.configHome("""
            name = "fromfile"
            discovery = false
            location = "51.5074,-0.1278"
            hop_limit = 3
            """, in: directory)
        let chat = try Self.chat([], home: home, in: directory)
        let ready = try await chat.waitForEvent("\"event\":\"ready\"")
        #expect(ready.contains("\"name\":\"fromfile\""))
        // discovery = false: no discovery events, and the location answers /here.
        chat.send("/here")
        let here = try await chat.waitForEvent("\"event\":\"here\"")
        #expect(here.contains("\"lat\":51.5074"), "\(here)")
        #expect(here.contains("\"lon\":-0.1278"), "\(here)")
        // A location set with /here wins over the file's, also after a restart.
        chat.send("/here 48.8566,2.3522")
        _ = try await chat.waitForEvent("\"event\":\"here\"", "48.8566")
        chat.closeInput()
        #expect(try await chat.waitForExit() == 0)
        #expect(!chat.output.contains { $0.contains("\"event\":\"advertising\"") })
        let again = try Self.chat([], home: home, in: directory)
        again.send("/here")
        _ = try await again.waitForEvent("\"event\":\"here\"", "48.8566")
        again.closeInput()
    }

    @Test("options on the command line override the file's")
    func commandLineWins() async throws {
        let directory = TemporaryDirectory()
        let home = try Self.configHome("name = \"fromfile\"\ndiscovery = false\n", in: directory)
        let chat = try Self.chat(["--name", "fromflag"], home: home, in: directory)
        let ready = try await chat.waitForEvent("\"event\":\"ready\"")
        #expect(ready.contains("\"name\":\"fromflag\""))
        chat.closeInput()
    }

    @Test("--config FILE is read instead of the default one")
    func explicitFile() async throws {
        let directory = TemporaryDirectory()
        let home = try Self.configHome("name = \"default\"\n", in: directory)
        let other = directory.appending("other.toml")
        try "name = \"other\"\ndiscovery = false\n".write(toFile: other, atomically: true, encoding: .utf8)
        let chat = try Self.chat(["--config", other], home: home, in: directory)
        let ready = try await chat.waitForEvent("\"event\":\"ready\"")
        #expect(ready.contains("\"name\":\"other\""))
        chat.closeInput()
    }

    @Test("a bad file stops meshchat and meshchat send with exit 78, naming the file, the line and the key", arguments: [
        ("name = \"x\"\nprot = 7000\n", ":2: key \"prot\": unknown key (did you mean \"port\"?)"),
        ("port = \"7000\"\n", ":1: key \"port\": expected an integer"),
        ("\n\nhop_limit = 99\n", ":3: key \"hop_limit\": 99 is out of range; use 1 to 32"),
        ("name = \"x\"\nname =\n", ":2:"),
    ])
    func badFile(_ text: String, _ message: String) async throws {
        let directory = TemporaryDirectory()
        let home = try Self.configHome(text, in: directory)
        let file = home + "/meshchat/config.toml"
        let chat = try Self.chat(["--no-discovery"], home: home, in: directory)
        #expect(try await chat.waitForExit() == 78)
        #expect(chat.errors.contains(file + message), "\(chat.errors)")
        let send = try ChatProcess(["send", "--data-dir", directory.appending("node"), "--to", "@x", "hi"], label: "send",
                                   environment: ["XDG_CONFIG_HOME": home])
        #expect(try await send.waitForExit() == 78)
        #expect(send.errors.contains(file + message), "\(send.errors)")
    }

    @Test("--config naming a file that does not exist is an error; an absent default file is not")
    func missingFile() async throws {
        let directory = TemporaryDirectory()
        let missing = directory.appending("nope.toml")
        let chat = try Self.chat(["--no-discovery", "--config", missing], home: directory.appending("empty"), in: directory)
        #expect(try await chat.waitForExit() == 78)
        #expect(chat.errors.contains("\(missing): no such file"), "\(chat.errors)")
        let plain = try Self.chat(["--no-discovery"], home: directory.appending("empty"), in: directory)
        _ = try await plain.waitForEvent("\"event\":\"ready\"")
        plain.closeInput()
        #expect(try await plain.waitForExit() == 0)
    }
}
