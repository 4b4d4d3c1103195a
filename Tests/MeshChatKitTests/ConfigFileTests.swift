import Logging
import MeshChatKit
import MeshFiles
import Places
import Testing

/// The configuration file's parsing and validation, on text (no files).
@Suite("configuration file")
struct ConfigFileTests {
    static let file = "/home/ann/.config/meshchat/config.toml"

    static func parse(_ text: String) throws(ConfigFileError) -> ChatSettings {
        try ConfigFile.parse(text, file: file, home: "/home/ann")
    }

    static func failure(_ text: String) -> ConfigFileError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test("every key is read, with paths resolved from the file's directory and ~")
    func everyKey() throws {
        let settings = try Self.parse("""
            # my node
            name = "alice"
            service = "work-chat"
            places = ["~/maps/london.geojson.gz", "cities.csv", "/srv/data/eat.csv"]
            location = "51.5074,-0.1278"
            port = 7000
            data_dir = "~/chat"
            hop_limit = 3
            log_level = "debug"
            connect = ["192.0.2.7:7000", "[::1]:7001"]
            discovery = false
            manual = false
            downloads = "inbox"
            max_file_size = "4GiB"

            [info]
            room = "blue"
            """)
        #expect(settings.name == "alice")
        #expect(settings.service == "work-chat")
        #expect(settings.places == ["/home/ann/maps/london.geojson.gz", "/home/ann/.config/meshchat/cities.csv", "/srv/data/eat.csv"])
        #expect(settings.location == Coordinate(latitude: 51.5074, longitude: -0.1278))
        #expect(settings.port == 7000)
        #expect(settings.dataDirectory == "/home/ann/chat")
        #expect(settings.hopLimit == 3)
        #expect(settings.logLevel == .debug)
        #expect(settings.connect == ["192.0.2.7:7000", "[::1]:7001"])
        #expect(settings.discovery == false)
        #expect(settings.manual == false)
        #expect(settings.info == ["room": "blue"])
        #expect(settings.downloads == "/home/ann/.config/meshchat/inbox")
        #expect(settings.maxFileSize == 4 << 30)
        #expect(try Self.parse("max_file_size = 1048576\n").maxFileSize == 1 << 20)
    }

    @Test("a file size is bytes or a whole number with a binary unit, 1 byte to 16 GiB; anything else is refused", arguments: [
        ("1048576", UInt64?.some(1 << 20)), ("500M", 500 << 20), ("500 MiB", 500 << 20), ("4gib", 4 << 30), ("64k", 64 << 10),
        ("16GiB", 16 << 30), ("7b", 7), (" 12 ", 12),
        ("0", nil), ("17GiB", nil), ("-1", nil), ("1.5G", nil), ("4TiB", nil), ("G", nil), ("", nil),
        ("99999999999999999999G", nil), ("184467440737095516160", nil), ("4 G B", nil), ("١٢", nil),
    ])
    func fileSize(_ text: String, _ bytes: UInt64?) {
        #expect(FileTransferLimits.size(parsing: text) == bytes, "\(text)")
    }

    @Test("a single string is a one-item list for places and connect; an empty file sets nothing")
    func stringOrList() throws {
        let settings = try Self.parse("places = \"/data/a.csv\"\nconnect = \"127.0.0.1:9000\"\n")
        #expect(settings.places == ["/data/a.csv"])
        #expect(settings.connect == ["127.0.0.1:9000"])
        let code = "meshchat:ae72fqoq4w3eu74itgvlxtg5537rwwacatakqaixar7qaaabdfqdiwi"
        #expect(try Self.parse("connect = [\"\(code)\", \"[::1]:7001\"]\n").connect == [code, "[::1]:7001"])
        #expect(try Self.parse("") == ChatSettings())
        #expect(try Self.parse("# nothing but a comment\n") == ChatSettings())
    }

    @Test("a syntax error names the file, TOMLKit's line and column")
    func syntaxError() throws {
        let error = try #require(Self.failure("name = \"alice\"\nport = = 7\n"))
        #expect(error.code == .syntax)
        #expect(error.line == 2)
        #expect(error.column != nil)
        #expect(error.description.hasPrefix("\(Self.file):2:"))
        #expect(error.description.contains("not valid TOML"))
        // A key given twice is a TOML error too.
        #expect(Self.failure("port = 1\nport = 2\n")?.code == .syntax)
        #expect(Self.failure("port = 1\nport = 2\n")?.line == 2)
    }

    @Test("an unknown key names its line, suggests the near one and lists the known keys")
    func unknownKey() throws {
        let error = try #require(Self.failure("name = \"alice\"\n\nprot = 7000\n"))
        #expect(error.code == .unknownKey)
        #expect(error.line == 3)
        #expect(error.key == "prot")
        #expect(error.description.hasPrefix("\(Self.file):3: key \"prot\": unknown key (did you mean \"port\"?)"))
        for key in ConfigFile.keys.map(\.name) {
            #expect(error.description.contains(key))
        }
        // An unknown table, and a known key's typo after a wrong value: the unknown key wins.
        #expect(Self.failure("port = \"x\"\n[colours]\nme = \"red\"\n")?.key == "colours")
        #expect(Self.failure("port = \"x\"\n[colours]\nme = \"red\"\n")?.line == 2)
        #expect(Self.failure("Name = \"x\"\n")?.description.contains("did you mean \"name\"") == true)
    }

    @Test("a value of the wrong type names the key, its line, what was expected and what was found", arguments: [
        ("port = \"7000\"", "port", "expected an integer from 0 to 65535 (0 picks a free port), found a string"),
        ("name = 5", "name", "found an integer"),
        ("discovery = \"no\"", "discovery", "expected true or false, found a string"),
        ("places = 3", "places", "found an integer"),
        ("places = [\"a.csv\", 3]", "places", "item 2 of the list is an integer"),
        ("connect = [true]", "connect", "item 1 of the list is a boolean"),
        ("hop_limit = 2.5", "hop_limit", "found a floating-point number"),
        ("location = [51.5, -0.1]", "location", "found a list"),
        ("info = \"room=blue\"", "info", "found a string"),
        ("[info]\nroom = 5", "info.room", "expected a string, found an integer"),
        ("max_file_size = true", "max_file_size", "found a boolean"),
    ])
    func wrongType(_ text: String, _ key: String, _ message: String) throws {
        let error = try #require(Self.failure("# settings\n" + text + "\n"))
        #expect(error.code == .wrongType)
        #expect(error.key == key)
        #expect(error.line == text.split(separator: "\n").count + 1, "\(error)")
        #expect(error.description.contains(message), "\(error)")
        #expect(error.description.hasPrefix(Self.file + ":"))
    }

    @Test("a value out of range or malformed names the key, its line and the rule", arguments: [
        ("port = 70000", "port", "70000 is out of range; use 0 to 65535"),
        ("port = -1", "port", "-1 is out of range"),
        ("hop_limit = 0", "hop_limit", "0 is out of range; use 1 to 32"),
        ("hop_limit = 33", "hop_limit", "33 is out of range; use 1 to 32"),
        ("name = \"\"", "name", "1 to 63 bytes"),
        ("name = \"\(String(repeating: "n", count: 64))\"", "name", "is 64 bytes"),
        ("service = \"Bad_Type\"", "service", "is not a service type"),
        ("location = \"91,0\"", "location", "LAT,LON"),
        ("location = \"here\"", "location", "LAT,LON"),
        ("connect = \"nohost\"", "connect", "has no port"),
        ("connect = \"meshchat:ae72fqoq4w3eu74itgvlxtg5537rwwacatakqaixar7qaaabdfqdiwa\"", "connect", "not a valid connection code"),
        ("log_level = \"loud\"", "log_level", "\"loud\" is not a log level"),
        ("data_dir = \"\"", "data_dir", "empty"),
        ("downloads = \"\"", "downloads", "empty"),
        ("places = [\"\"]", "places", "file 1 is empty"),
        ("max_file_size = 0", "max_file_size", "not a size from 1 byte to 16 GiB"),
        ("max_file_size = \"lots\"", "max_file_size", "not a size"),
        ("max_file_size = \"32GiB\"", "max_file_size", "not a size"),
        ("[info]\n_id = \"x\"", "info", "reserved"),
    ])
    func invalidValue(_ text: String, _ key: String, _ message: String) throws {
        let error = try #require(Self.failure("\n" + text + "\n"))
        #expect(error.code == .invalidValue)
        #expect(error.key == key)
        #expect(error.line == 2, "\(error)")
        #expect(error.description.contains(message), "\(error)")
        #expect(error.description.hasPrefix("\(Self.file):2: key \"\(key)\": "))
    }

    @Test("the command line overrides the file setting by setting; lists are replaced, not merged")
    func precedence() throws {
        let file = try Self.parse("name = \"file\"\nport = 7000\nplaces = [\"a.csv\"]\ndiscovery = false\n")
        var flags = ChatSettings()
        flags.name = "flag"
        flags.places = ["/b.csv"]
        let merged = flags.overriding(file)
        #expect(merged.name == "flag")
        #expect(merged.port == 7000)
        #expect(merged.places == ["/b.csv"])
        #expect(merged.discovery == false)
        #expect(ChatSettings().overriding(file) == file)
    }

    @Test("the default path is under $XDG_CONFIG_HOME when it is absolute, else ~/.config")
    func defaultPath() {
        #expect(ConfigFile.defaultPath(environment: ["XDG_CONFIG_HOME": "/x/conf", "HOME": "/home/ann"]) == "/x/conf/meshchat/config.toml")
        #expect(ConfigFile.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/ann"]) == "/home/ann/.config/meshchat/config.toml")
        #expect(ConfigFile.defaultPath(environment: ["HOME": "/home/ann"]) == "/home/ann/.config/meshchat/config.toml")
    }

    @Test("a --config file that does not exist is an error; the default one may be absent")
    func missingFile() throws {
        let environment = ["XDG_CONFIG_HOME": "/nonexistent-meshchat-test", "HOME": "/nonexistent-meshchat-test"]
        #expect(try ConfigFile.load(path: nil, environment: environment) == ChatSettings())
        #expect(throws: ConfigFileError(.missing, file: "/nonexistent-meshchat-test/x.toml", message: "")) {
            try ConfigFile.load(path: "/nonexistent-meshchat-test/x.toml", environment: environment)
        }
    }

    @Test("bell and mentions: what calls you; a bad value names the key and the rule")
    func attentionKeys() throws {
        let settings = try Self.parse("bell = false\nmentions = [\"oncall\", \" alice_w \"]\n")
        #expect(settings.bell == false)
        #expect(settings.mentions == ["oncall", "alice_w"])
        #expect(try Self.parse("mentions = \"oncall\"\n").mentions == ["oncall"])
        #expect(Self.failure("bell = \"no\"\n")?.key == "bell")
        #expect(Self.failure("mentions = [\"\"]\n")?.description.contains("word 1 is empty") == true)
        #expect(Self.failure("mentions = [\"\(String(repeating: "x", count: 64))\"]\n")?.description.contains("longer than 63") == true)
        let many = (1...33).map { "\"w\($0)\"" }.joined(separator: ", ")
        #expect(Self.failure("mentions = [\(many)]\n")?.description.contains("33 words; at most 32") == true)
        var flags = ChatSettings()
        flags.bell = true
        #expect(flags.overriding(settings).bell == true)
        #expect(flags.overriding(settings).mentions == ["oncall", "alice_w"])
    }

    @Test("presence: summary, all or none; anything else names the key and the choices")
    func presenceKey() throws {
        #expect(try Self.parse("presence = \"none\"\n").presence == PresenceMode.none)
        #expect(try Self.parse("presence = \"all\"\n").presence == .all)
        #expect(try Self.parse("name = \"a\"\n").presence == nil)
        let wrong = Self.failure("presence = \"quiet\"\n")
        #expect(wrong?.key == "presence")
        #expect(wrong?.description.contains("not summary, all or none") == true)
        #expect(Self.failure("presence = true\n")?.key == "presence")
        #expect(Self.failure("presense = \"all\"\n")?.description.contains("did you mean \"presence\"") == true)
    }
}
