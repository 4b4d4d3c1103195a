import ArgumentParser
import Foundation
import MeshSession

/// `meshbench resource-source`: sends one file with `Session.sendResource` to a `meshbench sink`
/// one hop away (the node at `--port`) or two (the node behind it, through it as a relay), and
/// prints one JSON ``SourceResult``: the time from the offer (`sendResource` returned: the file
/// hashed and recorded) to the receiver's `finishedReceiving` (both CLOCK_MONOTONIC, shared by the
/// processes of one machine), with the receiver's SHA-256 of the stored file beside the sender's.
struct ResourceSourceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resource-source",
        abstract: "Sends a file as a resource to a meshbench sink 1 or 2 hops away (prints one JSON result).",
        shouldDisplay: false)

    @Option(help: "The port on 127.0.0.1 of the sink (1 hop) or of the relay in front of it (2 hops).") var port: Int
    @Option(help: "The file to send (an absolute path).") var file: String
    @Option(help: "The sink's distance: 1 or 2.") var hops = 1
    @Option(help: "Seconds before the run is given up.") var timeout = 600

    func validate() throws {
        guard (1...2).contains(hops) else { throw ValidationError("Please give --hops 1 or 2.") }
        guard file.hasPrefix("/") else { throw ValidationError("Please give --file as an absolute path.") }
        guard (1...86_400).contains(timeout) else { throw ValidationError("Please give --timeout from 1 to 86400.") }
    }

    func run() async throws {
        let result = try await MeshWorkloads.dialling(name: "resource-source", port: port, watchdog: .seconds(timeout)) { session in
            var events = session.events.makeAsyncIterator()
            guard let sink = try await MeshWorkloads.peersByHops(&events, hops: hops, command: "resource-source").last else {
                throw ValidationError("resource-source: no sink")
            }
            let start = monotonicSeconds()
            let transfer = try await session.sendResource(at: file, withName: "meshbench", to: sink)
            let offered = monotonicSeconds()
            // A failed transfer ends the run at once (the events end) instead of at the watchdog.
            let watcher = Task {
                for await update in transfer {
                    if case .failed(let failure) = update {
                        FileHandle.standardError.write(Data("resource-source: \(failure)\n".utf8))
                        await session.disconnect()
                    }
                }
            }
            defer { watcher.cancel() }
            var answer: SinkResult?
            while answer == nil, let event = await events.next() {
                if case .received(let message) = event, message.sender == sink, case .data(let data) = message.content,
                   data.first == Kind.result.rawValue, let decoded = try? JSONDecoder().decode(SinkResult.self, from: data.dropFirst()),
                   decoded.finishedAt != nil {
                    answer = decoded
                }
            }
            guard let answer, let finishedAt = answer.finishedAt else {
                throw ValidationError("resource-source: no answer from the sink (the transfer failed or the watchdog fired)")
            }
            if let failure = answer.failure { throw ValidationError("resource-source: the sink reports \(failure)") }
            let seconds = max(finishedAt - offered, 1e-9)
            return SourceResult(workload: "resource", transport: "meshchat", messages: 1, bytesPerMessage: Int(clamping: transfer.size),
                                seconds: seconds, messagesPerSecond: 1 / seconds,
                                gbitPerSecond: Double(answer.bytes) * 8 / seconds / 1e9,
                                sha256Sent: transfer.sha256.map { String(format: "%02x", $0) }.joined(),
                                sha256Received: answer.sha256, prepareSeconds: offered - start)
        }
        printJSON(result)
        if result.sha256Sent != result.sha256Received { throw ExitCode(2) }
    }
}
