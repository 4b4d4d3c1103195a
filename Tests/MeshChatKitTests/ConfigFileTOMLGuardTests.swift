import MeshChatKit
import Testing

/// Text that toml++ asserts on (found by `scripts/fuzz config`; `Tests/FuzzCorpus/config`
/// keeps the input): refused as syntax errors at their place, and the process lives.
@Suite("configuration file: text toml++ asserts on")
struct ConfigFileTOMLGuardTests {
    static func failure(_ text: String) -> ConfigFileError? {
        do {
            _ = try ConfigFile.parse(text, file: "/c.toml", home: "/home/ann")
            return nil
        } catch {
            return error
        }
    }

    @Test("a header key starting with é, =, a tab then #, or nothing (after a byte order mark too) is a syntax error with its place",
          arguments: ["[é]\n", "name = \"a\"\n  [=x]\n", "[[\t#\n", "[", "[\u{FFFD}", "[ .a]\r\n", "\u{FEFF}[\u{FFFD}", "name = \"a\"\r\n[é]\r\n"])
    func refused(_ text: String) throws {
        let error = try #require(Self.failure(text))
        #expect(error.code == .syntax)
        #expect(error.description.contains("a table header's key must start with"))
        #expect(error.line == (text.hasPrefix("name") ? 2 : 1))
    }

    @Test("headers toml++ reads itself still reach it: a table is a wrong type or an unknown key, [] its own syntax error")
    func passedOn() {
        #expect(Self.failure("[places]\n")?.code == .wrongType)
        #expect(Self.failure("[ \"quoted\" ]\n")?.code == .unknownKey)
        #expect(Self.failure("[[servers]]\n")?.code == .unknownKey)
        #expect(Self.failure("[]\n")?.code == .syntax)
        #expect(Self.failure("connect = [\n  \"127.0.0.1:7000\",\n]\n") == nil)
    }

    @Test("a date, a space and one digit is a syntax error at the digit; in a string or a comment, or as a full date-time, it is not")
    func truncatedDateTime() throws {
        for text in ["x = 2020-01-01 1\n", "port = 1979-05-27 0 ", "connect = [1979-05-27 7]", "p=5br-----\u{FFFD}0 1 ", "p=5b\u{FFFD}$-\u{FFFD}=-\u{FFFD}0 1 ", "p=5\"\u{FFFD}$-\u{FFFD}=-\u{FFFD}0 1 ", "n=5\"\u{FFFD}$-\u{FFFD}=-\u{FFFD}0 9\u{FEFF}"] {
            let error = try #require(Self.failure(text), "\(text)")
            #expect(error.code == .syntax)
            #expect(error.description.contains("a date followed by a space needs a time"), "\(text)")
        }
        #expect(Self.failure("x = 2020-01-01 1")?.description.contains("needs a time") != true)  // toml++ stops at the end
        #expect(Self.failure("name = \"2020-01-01 1 \"\n") == nil)
        #expect(Self.failure("# 2020-01-01 1 \nname = \"a\"\n") == nil)
        #expect(Self.failure("name = \"\"\"\n2020-01-01 1 \"\"\"\n")?.description.contains("needs a time") != true)
        #expect(Self.failure("x = 1979-05-27 07:32:00\n")?.code == .unknownKey)
    }

    @Test("a } where an array expects a value is a syntax error at it; in a string it is not", arguments: [
        "n=[}", "x = [1,}", "x = [#c\n}]", "x = [\n}", "x = {a=[}]}", "x = [ 1 , # c\n  }",
    ])
    func braceInArray(_ text: String) throws {
        let error = try #require(Self.failure(text))
        #expect(error.code == .syntax)
        #expect(error.description.contains("\"}\" where an array expects a value"))
    }

    @Test("a } after [ or , inside a string or a comment is no error")
    func braceInString() {
        #expect(Self.failure("name = \"[}\"\n") == nil)
        #expect(Self.failure("name = '[,}'\n# [}\n") == nil)
    }
}
