import MeshTestSupport

extension ChatProcess {
    /// A `meshchat --json --no-discovery` named `name` with its own data directory in `directory`
    /// (the same one again after a restart), plus `extra` arguments.
    static func local(_ name: String, _ directory: TemporaryDirectory, _ extra: [String] = []) throws -> ChatProcess {
        try ChatProcess(["--name", name, "--json", "--no-discovery", "--data-dir", directory.appending(name)] + extra, label: name)
    }
}
