import ArgumentParser
import Crypto
import Foundation
import Logging
import MeshRouting
import MeshSession

/// The sink and source over a real meshchat ``Session`` (Noise-encrypted TCP).
enum MeshWorkloads {
    static func makeSession(name: String, port: Int) throws -> Session {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("meshbench-\(name)-\(getpid())").path
        let me = try LocalPeer(displayName: name, dataDirectory: directory)
        var configuration = Session.Configuration()
        configuration.port = port
        configuration.host = "127.0.0.1"
        configuration.resources.maxIncomingSize = ResourceLimits.maxSize
        // `MESHBENCH_RELAY_POLICY=fixed` (inherited by the child processes): the relay policy before
        // session 16 (fixed-rate budgets, relayed packets dropped on a congested link), for A/B runs.
        if ProcessInfo.processInfo.environment["MESHBENCH_RELAY_POLICY"] == "fixed" {
            configuration.routing.workConservingBudgets = false
            configuration.routing.relayBackPressure = false
        }
        var logger = Logger(label: "meshbench.\(name)", factory: { _ in SwiftLogNoOpLogHandler() })
        if let level = ProcessInfo.processInfo.environment["MESHBENCH_LOG"].flatMap(Logger.Level.init(rawValue:)) {
            logger = Logger(label: "meshbench.\(name)", factory: { StreamLogHandler.standardError(label: $0) })
            logger.logLevel = level
        }
        return Session(peer: me, configuration: configuration, logger: logger)
    }

    /// Runs `body` with a running session that dialled `127.0.0.1:port`, then disconnects it.
    /// A watchdog (not a synchroniser) disconnects it after `watchdog`, so that a lost message
    /// ends the run (the body's event stream ends) instead of hanging it.
    /// Reads events until a node is reachable at each hop count 1…`hops` (the last one reported for
    /// each); throws when the dial fails or the events end first.
    /// - Returns: the nodes, nearest first.
    static func peersByHops(_ events: inout EventQueue<SessionEvent>.AsyncIterator, hops: Int, command: String) async throws -> [PeerID] {
        var found = [PeerID?](repeating: nil, count: hops)
        while found.contains(where: { $0 == nil }), let event = await events.next() {
            switch event {
            case .reachabilityChanged(let peer, let route?) where (1...hops).contains(route.hops): found[route.hops - 1] = peer
            case .connectFailed(_, let reason): throw ValidationError("\(command): connect failed: \(reason)")
            default: continue
            }
        }
        let peers = found.compactMap { $0 }
        guard peers.count == hops else { throw ValidationError("\(command): the nodes 1 to \(hops) hops away never became reachable") }
        return peers
    }

    static func dialling<T: Sendable>(name: String, port: Int, watchdog: Duration,
                                      _ body: (Session) async throws -> T) async throws -> T {
        let session = try makeSession(name: name, port: 0)
        try await session.start()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await session.run() }
            group.addTask {
                try? await Task.sleep(for: watchdog)
                await session.disconnect()
            }
            session.connect(host: "127.0.0.1", port: port)
            let result = try await body(session)
            await session.disconnect()
            group.cancelAll()
            return result
        }
    }

    /// A session that counts data per sender (answering each end marker with that sender's totals
    /// so far, so that a source across lossy relays may repeat it), echoes pings, and reports each
    /// resource it receives to its sender (``SinkResult/finishedAt``, the file's SHA-256 computed
    /// after that instant), then removes the file.
    static func sink(port: Int, verify: Bool, connect: Int? = nil) async throws {
        let session = try makeSession(name: "sink", port: port)
        let bound = try await session.start()
        printJSON(["port": bound])
        if let connect { session.connect(host: "127.0.0.1", port: connect) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await session.run() }
            group.addTask { await receiveResources(session) }
            var results: [PeerID: SinkResult] = [:]
            var hashers: [PeerID: SHA256] = [:]
            for await event in session.events {
                guard case .received(let message) = event, case .data(let data) = message.content,
                      let first = data.first, let kind = Kind(rawValue: first) else { continue }
                let sender = message.sender
                switch kind {
                case .data:
                    results[sender, default: SinkResult()].bytes += data.count
                    results[sender, default: SinkResult()].messages += 1
                    if verify { hashers[sender, default: SHA256()].update(data: data) }
                case .ping:
                    try? await session.send(data, to: [sender], mode: message.mode)
                case .end:
                    var result = results[sender] ?? SinkResult()
                    result.sha256 = verify ? hex((hashers[sender] ?? SHA256()).finalize()) : ""
                    let json = try JSONEncoder().encode(result)
                    try? await session.send(Data([Kind.result.rawValue]) + json, to: [sender], mode: .reliable)
                case .result:
                    break
                }
            }
            group.cancelAll()
        }
    }

    /// Answers each finished resource with a ``SinkResult`` to its sender: the instant it finished,
    /// then (untimed) the stored file's SHA-256 and size; removes the file.
    static func receiveResources(_ session: Session) async {
        for await event in session.resourceEvents {
            guard case .finishedReceiving(let progress, let outcome) = event else { continue }
            var result = SinkResult(messages: 1, finishedAt: monotonicSeconds())
            switch outcome {
            case .success(let path):
                if let (bytes, digest) = try? hashFile(path) {
                    result.bytes = bytes
                    result.sha256 = digest
                }
                try? FileManager.default.removeItem(atPath: path)
            case .failure(let failure):
                result.failure = failure.description
            }
            guard let json = try? JSONEncoder().encode(result) else { continue }
            try? await session.send(Data([Kind.result.rawValue]) + json, to: [progress.peer], mode: .reliable)
        }
    }

    /// A file's size and SHA-256 (hex), read 1 MiB at a time.
    static func hashFile(_ path: String) throws -> (Int, String) {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var hasher = SHA256()
        var bytes = 0
        while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty {
            hasher.update(data: block)
            bytes += block.count
        }
        return (bytes, hex(hasher.finalize()))
    }

    /// Runs `workload` against the sink `hops` away: the node dialled at `port` (1), or the node
    /// behind it (2: a relayed send, sealed end to end; relays drop what they cannot take, so the
    /// source repeats its end marker and reports what arrived in ``SourceResult/messagesReceived``).
    static func source(port: Int, workload: Workload, count: Int, size: Int, verify: Bool, hops: Int = 1) async throws -> SourceResult {
        let session = try makeSession(name: "source", port: 0)
        try await session.start()
        return try await withThrowingTaskGroup(of: SourceResult?.self) { group in
            group.addTask { try await session.run(); return nil }
            session.connect(host: "127.0.0.1", port: port)
            var events = session.events.makeAsyncIterator()
            var sink: PeerID?
            if hops > 1 {
                sink = try await peersByHops(&events, hops: hops, command: "source").last
            }
            while sink == nil, let event = await events.next() {
                switch event {
                case .peerChanged(let peer, .connected): sink = peer
                case .connectFailed(_, let reason): throw RawSocket.Failure(description: "connect failed: \(reason)")
                default: continue
                }
            }
            guard let sink else { throw RawSocket.Failure(description: "no connection") }
            let maker = PayloadMaker(size: size)
            var result: SourceResult
            switch workload {
            case .bulk, .rate:
                if hops > 1 {
                    // One round trip first (untimed), so that the end-to-end session is established and
                    // the bulk goes as session messages (§19.6), as in a conversation under way. Without
                    // a reply every packet of a fresh session is a prekey message, which a relay charges
                    // to its fixed relaying budget (512 a second, §13.11) and drops above it.
                    let ping = PayloadMaker(size: 64).data(0, kind: .ping)
                    try await session.send(ping, to: [sink], mode: .reliable)
                    let again = Task {
                        while (try? await Task.sleep(for: .seconds(1))) != nil {
                            try? await session.send(ping, to: [sink], mode: .reliable)
                        }
                    }
                    defer { again.cancel() }
                    echo: while let event = await events.next() {
                        if case .received(let message) = event, message.sender == sink, case .data(let data) = message.content,
                           data == ping { break echo }
                    }
                }
                var hasher = SHA256()
                let start = monotonicSeconds()
                for i in 0..<count {
                    let payload = maker.data(i)
                    if verify { hasher.update(data: payload) }
                    try await session.send(payload, to: [sink], mode: .reliable)
                }
                try await session.send(Data([Kind.end.rawValue]), to: [sink], mode: .reliable)
                // Across relays the marker or the answer may be dropped: repeat it until answered.
                let repeater = hops > 1 ? Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(50))
                        try? await session.send(Data([Kind.end.rawValue]), to: [sink], mode: .reliable)
                    }
                } : nil
                var sinkResult: SinkResult?
                while sinkResult == nil, let event = await events.next() {
                    if case .received(let message) = event, message.sender == sink, case .data(let data) = message.content,
                       data.first == Kind.result.rawValue {
                        sinkResult = try JSONDecoder().decode(SinkResult.self, from: data.dropFirst())
                    }
                }
                repeater?.cancel()
                let seconds = monotonicSeconds() - start
                guard let sinkResult, sinkResult.messages == count || (hops > 1 && sinkResult.messages > 0) else {
                    throw RawSocket.Failure(description: "sink counted \(sinkResult?.messages ?? -1) of \(count) messages")
                }
                result = SourceResult(
                    workload: workload.rawValue, transport: "meshchat", messages: count, bytesPerMessage: size,
                    seconds: seconds, messagesPerSecond: Double(count) / seconds,
                    gbitPerSecond: Double(sinkResult.bytes) * 8 / seconds / 1e9,
                    sha256Sent: verify && sinkResult.messages == count ? hex(hasher.finalize()) : nil,
                    sha256Received: verify && sinkResult.messages == count ? sinkResult.sha256 : nil,
                    messagesReceived: sinkResult.messages == count ? nil : sinkResult.messages)
            case .latency:
                let mode: SendMode = .reliable
                var samples: [Double] = []
                samples.reserveCapacity(count)
                let ping = maker.data(0, kind: .ping)
                let start = monotonicSeconds()
                var lost = 0
                for _ in 0..<count {
                    let t0 = monotonicSeconds()
                    try await session.send(ping, to: [sink], mode: mode)
                    var answered = false
                    while !answered, let event = await events.next() {
                        if case .received(let message) = event, case .data(let data) = message.content, data.first == Kind.ping.rawValue {
                            answered = true
                        }
                    }
                    if !answered { lost += 1 }
                    samples.append((monotonicSeconds() - t0) * 1e6)
                }
                let seconds = monotonicSeconds() - start
                samples.sort()
                result = SourceResult(
                    workload: workload.rawValue, transport: "meshchat", messages: count, bytesPerMessage: size,
                    seconds: seconds, messagesPerSecond: Double(count) / seconds, gbitPerSecond: 0,
                    p50Microseconds: percentile(samples, 0.5), p99Microseconds: percentile(samples, 0.99))
            }
            await session.disconnect()
            group.cancelAll()
            return result
        }
    }
}
