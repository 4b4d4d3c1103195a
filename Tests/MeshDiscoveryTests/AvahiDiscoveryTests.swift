import Foundation
import Logging
import MeshDiscovery
import Synchronization
import Testing

/// ``AvahiDiscovery`` against the real avahi-daemon (`scripts/test` starts one on loopback).
///
/// Each test uses a service type of its own, so tests never see each other's services and may
/// run in parallel. Every wait is for an event with a deadline; nothing sleeps to synchronise.
/// With no daemon these tests fail: `AvahiDiscovery.init` throws.
@Suite("AvahiDiscovery against avahi-daemon")
struct AvahiDiscoveryTests {
    static let logger = Logger(label: "test.avahi")

    /// TXT strings that are not `key=value` text: raw bytes, NUL, invalid UTF-8, no `=`.
    static let txt: [[UInt8]] = [
        Array("id=alice".utf8),
        [0x6b, 0x3d, 0xff, 0xfe, 0x00, 0x80],    // "k=" then bytes that are not UTF-8, with a NUL
        Array("flag".utf8),                      // no "="
        [0xc3, 0x28],                            // invalid UTF-8
        Array("v=1".utf8),
    ]

    /// `_mct` and 6 random letters: a type no other test (or run) uses.
    static func uniqueType() -> String {
        "_mct" + randomLetters(6) + "._tcp"
    }

    static func uniqueName(_ label: String) -> String {
        "mct-\(label)-\(randomLetters(4))"
    }

    static func randomLetters(_ count: Int) -> String {
        String((0..<count).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
    }

    static func randomPort() -> Int { Int.random(in: 20_000...60_000) }

    @Test("a browse resolves a publication: port, loopback address, TXT bytes in order; a TXT change of the live service is resolved again, with no removal", .timeLimit(.minutes(1)))
    func browseResolvesPublication() async throws {
        let type = Self.uniqueType(), name = Self.uniqueName("resolve"), port = Self.randomPort()
        let browser = try AvahiDiscovery(logger: Self.logger)
        let publisher = try AvahiDiscovery(logger: Self.logger)
        defer { browser.close(); publisher.close() }

        let seen = EventRecorder<BrowseEvent>()
        let browse = try browser.browse(type: type, onEvent: seen.callback)
        defer { browse.stop() }
        let published = EventRecorder<PublishEvent>()
        let publication = try publisher.publish(
            ServiceRegistration(name: name, type: type, port: port, txt: Self.txt), onEvent: published.callback)
        defer { publication.stop() }

        try await published.first("established as '\(name)'") { $0 == .established(name: name) }
        // The resolution on loopback: a daemon that `scripts/meshchat` started serves every interface,
        // and then the same service also resolves on eth0 first.
        let event = try await seen.first("resolved on lo") {
            if case .resolved(let service) = $0 { service.instance.name == name && service.instance.interfaceName == "lo" } else { false }
        }
        guard case .resolved(let service) = event else { Issue.record("not a resolution: \(event)"); return }
        #expect(service.port == port)
        #expect(["127.0.0.1", "::1"].contains(service.address), "address \(service.address)")
        #expect(service.txt == Self.txt)
        #expect(service.instance.interfaceName == "lo")
        #expect(service.hostName.hasSuffix(".local"), "host name \(service.hostName)")

        // PROTOCOL.md §12.5: the resolver stays, so an in-place change is seen.
        let changed: [[UInt8]] = [Array("v=2".utf8), Array("room=blue".utf8)]
        try publisher.updateTXT(of: publication, to: changed)
        let again = try await seen.first("resolved with the new TXT record") {
            if case .resolved(let service) = $0 { service.instance.name == name && service.txt == changed } else { false }
        }
        if case .resolved(let service) = again { #expect(service.port == port) }
        #expect(!seen.all.contains { if case .removed(let instance) = $0 { instance.name == name } else { false } },
                "the change came as an update, not a removal and a new service")
        #expect(throws: DiscoveryError.self) { try publisher.updateTXT(of: publication, to: [[]]) }
    }

    @Test("a browse started after the publication still finds it", .timeLimit(.minutes(1)))
    func browseAfterPublication() async throws {
        let type = Self.uniqueType(), name = Self.uniqueName("late"), port = Self.randomPort()
        let discovery = try AvahiDiscovery(logger: Self.logger)
        defer { discovery.close() }

        let published = EventRecorder<PublishEvent>()
        let publication = try discovery.publish(
            ServiceRegistration(name: name, type: type, port: port, txt: [Array("late=1".utf8)]),
            onEvent: published.callback)
        defer { publication.stop() }
        try await published.first("established as '\(name)'") { $0 == .established(name: name) }

        let seen = EventRecorder<BrowseEvent>()
        let browse = try discovery.browse(type: type, onEvent: seen.callback)
        defer { browse.stop() }
        let service = try await seen.resolved(name)
        #expect(service.port == port)
        #expect(service.txt == [Array("late=1".utf8)])
    }

    @Test("stopping a publication withdraws it: the browser reports removed, the publication nothing more",
          .timeLimit(.minutes(1)))
    func stopWithdraws() async throws {
        let type = Self.uniqueType(), name = Self.uniqueName("stop")
        let browser = try AvahiDiscovery(logger: Self.logger)
        let publisher = try AvahiDiscovery(logger: Self.logger)
        defer { browser.close(); publisher.close() }

        let seen = EventRecorder<BrowseEvent>()
        let browse = try browser.browse(type: type, onEvent: seen.callback)
        defer { browse.stop() }
        let published = EventRecorder<PublishEvent>()
        let publication = try publisher.publish(
            ServiceRegistration(name: name, type: type, port: Self.randomPort(), txt: []), onEvent: published.callback)
        try await published.first("established as '\(name)'") { $0 == .established(name: name) }
        let service = try await seen.resolved(name)

        publication.stop()
        let eventsAtStop = published.all.count
        publication.stop()    // idempotent
        try await seen.first("removed '\(name)'") { $0 == .removed(service.instance) }
        #expect(published.all.count == eventsAtStop, "events after stop: \(published.all.dropFirst(eventsAtStop))")
    }

    @Test("a second publication of a taken name reports a collision and is established under another name",
          .timeLimit(.minutes(1)))
    func nameCollision() async throws {
        let type = Self.uniqueType(), name = Self.uniqueName("twin")
        let first = try AvahiDiscovery(logger: Self.logger)
        let second = try AvahiDiscovery(logger: Self.logger)
        defer { first.close(); second.close() }
        // Different ports and TXT: avahi-daemon lets two identical registrations share a name.
        let port = Self.randomPort()
        let firstEvents = EventRecorder<PublishEvent>()
        let one = try first.publish(ServiceRegistration(name: name, type: type, port: port, txt: [Array("n=1".utf8)]),
                                    onEvent: firstEvents.callback)
        defer { one.stop() }
        try await firstEvents.first("established as '\(name)'") { $0 == .established(name: name) }

        let secondEvents = EventRecorder<PublishEvent>()
        let two = try second.publish(ServiceRegistration(name: name, type: type, port: port + 1, txt: [Array("n=2".utf8)]),
                                     onEvent: secondEvents.callback)
        defer { two.stop() }
        let collision = try await secondEvents.first("a collision of '\(name)'") {
            if case .collision(name, _) = $0 { true } else { false }
        }
        guard case .collision(_, let newName) = collision else { return }
        #expect(newName != name)
        #expect(newName.hasPrefix(name), "alternative name \(newName)")
        try await secondEvents.first("established as '\(newName)'") { $0 == .established(name: newName) }
        #expect(!firstEvents.all.contains { if case .collision = $0 { true } else { false } })

        // Both are announced: a browser resolves the two names.
        let seen = EventRecorder<BrowseEvent>()
        let browse = try first.browse(type: type, onEvent: seen.callback)
        defer { browse.stop() }
        var names: Set<String> = []
        while names != [name, newName] {
            let service = try await seen.resolved { [name, newName].contains($0) }
            names.insert(service.instance.name)
        }
    }

    @Test("stop() may be called from inside the event callback", .timeLimit(.minutes(1)))
    func stopFromCallback() async throws {
        let type = Self.uniqueType(), name = Self.uniqueName("inner")
        let discovery = try AvahiDiscovery(logger: Self.logger)
        defer { discovery.close() }
        let published = EventRecorder<PublishEvent>()
        let publication = try discovery.publish(
            ServiceRegistration(name: name, type: type, port: Self.randomPort(), txt: []), onEvent: published.callback)
        defer { publication.stop() }

        let seen = EventRecorder<BrowseEvent>()
        let handle = Locked<(any DiscoveryHandle)?>(nil)
        let browse = try discovery.browse(type: type) { event in
            seen.callback(event)
            if case .resolved = event {
                handle.value?.stop()    // on Avahi's thread, with its lock held
            }
        }
        handle.value = browse
        _ = try await seen.resolved(name)
        // The poll thread is not stuck: operations from this thread still go through.
        browse.stop()
        try await published.first("established as '\(name)'") { $0 == .established(name: name) }
    }

    @Test("the backend may be released inside its own callback (it then leaks its thread, by design)",
          .timeLimit(.minutes(1)))
    func releasedInsideCallback() async throws {
        let type = Self.uniqueType(), name = Self.uniqueName("last")
        let published = EventRecorder<PublishEvent>()
        let handle = Locked<(any DiscoveryHandle)?>(nil)
        do {
            let discovery = try AvahiDiscovery(logger: Self.logger)
            handle.value = try discovery.publish(
                ServiceRegistration(name: name, type: type, port: Self.randomPort(), txt: [])
            ) { event in
                withExtendedLifetime(discovery) {}    // after this scope, the only reference to the backend
                published.callback(event)
                if case .established = event {
                    handle.value?.stop()    // releases this closure, then the backend, on Avahi's thread
                }
            }
        }
        try await published.first("established as '\(name)'") { $0 == .established(name: name) }
        handle.value?.stop()    // from this thread: neither deadlocks nor touches freed objects
        #expect(published.all == [.established(name: name)])
    }

    @Test("close() ends live operations with notRunning; later calls throw it", .timeLimit(.minutes(1)))
    func closeEndsOperations() async throws {
        let type = Self.uniqueType(), name = Self.uniqueName("close")
        let discovery = try AvahiDiscovery(logger: Self.logger)
        let published = EventRecorder<PublishEvent>()
        let publication = try discovery.publish(
            ServiceRegistration(name: name, type: type, port: Self.randomPort(), txt: []), onEvent: published.callback)
        let seen = EventRecorder<BrowseEvent>()
        let browse = try discovery.browse(type: type, onEvent: seen.callback)

        discovery.close()
        discovery.close()    // idempotent
        try await published.first("failed(notRunning)") { $0 == .failed(DiscoveryError(.notRunning, "")) }
        try await seen.first("failed(notRunning)") { $0 == .failed(DiscoveryError(.notRunning, "")) }
        publication.stop()
        browse.stop()
        #expect(throws: DiscoveryError(.notRunning, "")) {
            _ = try discovery.browse(type: type) { _ in }
        }
    }

    @Test("a port outside 0...65535 is refused before reaching the daemon")
    func invalidPort() throws {
        let discovery = try AvahiDiscovery(logger: Self.logger)
        defer { discovery.close() }
        let registration = ServiceRegistration(name: "x", type: Self.uniqueType(), port: 70_000, txt: [])
        let error = #expect(throws: DiscoveryError.self) {
            _ = try discovery.publish(registration) { _ in }
        }
        #expect(error?.message.contains("70000") == true)
    }

    @Test("the daemon's refusal names what failed", .timeLimit(.minutes(1)))
    func invalidType() throws {
        let discovery = try AvahiDiscovery(logger: Self.logger)
        defer { discovery.close() }
        let error = #expect(throws: DiscoveryError.self) {
            _ = try discovery.browse(type: "not a type") { _ in }
        }
        #expect(error?.code == .daemonFailure)
        #expect(error?.message.contains("browsing 'not a type'") == true, "\(String(describing: error))")
    }

    /// Set in the child process of ``initWithoutSystemBus()``.
    static let childVariable = "MESHCHAT_AVAHI_NO_BUS_CHILD"
    static let childMarker = "avahi-no-bus-check:"

    /// libdbus reads `DBUS_SYSTEM_BUS_ADDRESS` once per process (the first connection caches
    /// it), so setting it inside this process would depend on test order and could break the
    /// other tests. Instead this test runs itself again in a new process of this test binary,
    /// with the variable naming a socket that does not exist from the start.
    @Test("init throws daemonNotRunning when DBUS_SYSTEM_BUS_ADDRESS names no bus", .timeLimit(.minutes(1)))
    func initWithoutSystemBus() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] == "1" {
            do {
                let discovery = try AvahiDiscovery(logger: Self.logger)
                discovery.close()
                Issue.record("connected although DBUS_SYSTEM_BUS_ADDRESS names a missing socket")
            } catch {
                #expect(error.code == .daemonNotRunning)
                #expect(error.message.contains("avahi-daemon is not running"), "\(error.message)")
                print(Self.childMarker, error.message)
            }
            return
        }
        let child = try await TestBinaryRun.run(
            arguments: ["--testing-library", "swift-testing", "--filter", "initWithoutSystemBus"],
            environment: [Self.childVariable: "1",
                          "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/meshchat-test/system_bus_socket"],
            timeout: .seconds(45))
        #expect(child.status == 0, "child output:\n\(child.output)")
        #expect(child.output.contains(Self.childMarker), "the check did not run in the child:\n\(child.output)")
        #expect(child.output.contains("avahi-daemon is not running"), "child output:\n\(child.output)")
    }
}

// MARK: - Helpers

/// Events a callback hands over, kept in order and awaited with a deadline.
final class EventRecorder<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])
    private let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(1024))
    }

    /// The closure to pass as `onEvent`.
    var callback: @Sendable (Event) -> Void {
        { [self] event in
            events.withLock { $0.append(event) }
            continuation.yield(event)
        }
    }

    /// Every event so far.
    var all: [Event] { events.withLock { $0 } }

    /// The next event (after those already awaited) that matches, within `timeout`.
    @discardableResult
    func first(_ what: String, within timeout: Duration = .seconds(10),
               sourceLocation: SourceLocation = #_sourceLocation,
               where match: @escaping @Sendable (Event) -> Bool) async throws -> Event {
        let stream = self.stream
        let found = await withDeadline(timeout) {
            for await event in stream where match(event) {
                return event
            }
            return nil
        }
        return try #require(found, "no event '\(what)' within \(timeout); events: \(all)", sourceLocation: sourceLocation)
    }
}

extension EventRecorder where Event == BrowseEvent {
    /// The next `.resolved` for an instance named `name`.
    func resolved(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ResolvedService {
        try await resolved(sourceLocation: sourceLocation) { $0 == name }
    }

    /// The next `.resolved` whose instance name matches.
    func resolved(sourceLocation: SourceLocation = #_sourceLocation,
                  name match: @escaping @Sendable (String) -> Bool) async throws -> ResolvedService {
        let event = try await first("resolved", sourceLocation: sourceLocation) {
            if case .resolved(let service) = $0 { match(service.instance.name) } else { false }
        }
        guard case .resolved(let service) = event else { preconditionFailure("matched a non-resolved event") }
        return service
    }
}

/// A value behind a lock, shareable between closures.
final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// `body`'s result, or nil when `timeout` passes first (then `body` is cancelled).
func withDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async -> T?) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// This test binary run again in a new process, its stdout and stderr gathered in a file.
struct TestBinaryRun {
    var status: Int32
    var output: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(arguments: [String], environment: [String: String], timeout: Duration) async throws -> TestBinaryRun {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let outputPath = NSTemporaryDirectory() + "meshchat-avahi-child-\(UUID().uuidString).log"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
              let output = FileHandle(forWritingAtPath: outputPath) else {
            throw Failure(description: "cannot create \(outputPath)")
        }
        defer { try? FileManager.default.removeItem(atPath: outputPath) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        let (exits, exited) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        process.terminationHandler = { process in
            exited.yield(process.terminationStatus)
            exited.finish()
        }
        try process.run()
        try? output.close()
        let status = await withDeadline(timeout) {
            for await status in exits {
                return status
            }
            return nil
        }
        if status == nil {
            process.terminate()
        }
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "(unreadable output)"
        guard let status else {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) did not exit within \(timeout):\n\(text)")
        }
        return TestBinaryRun(status: status, output: text)
    }
}
