import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A server of one-line requests on a Unix domain socket (mode 0600): each request is a line of
/// at most ``Limits/maxLineBytes`` bytes ended by `\n`, each answer one line.
///
/// The socket is input from anyone who can open it: a line over the limit is answered with the
/// `reject` line for ``Rejection/lineTooLong`` and the connection closed; a client beyond
/// ``Limits/maxClients`` gets ``Rejection/tooManyClients`` and is closed; a client idle for
/// ``Limits/idleTimeout`` is closed; a peer of another user id (`SO_PEERCRED`) is closed unanswered.
/// Requests of one connection are answered in order, one at a time.
///
/// Creating it never takes a socket someone listens on: an existing socket file is replaced only
/// when a connection to it is refused (a crashed owner's); anything else at the path is an error.
/// The caller decides who may create it (the chat holds the data directory's lock first).
///
/// This type is thread-safe.
public final class LocalLineServer: Sendable {
    /// The bounds of the server.
    public struct Limits: Sendable {
        /// The longest request line, without its `\n`.
        public var maxLineBytes = 16_384
        /// Connections served at once.
        public var maxClients = 8
        /// A connection with no request for this long is closed.
        public var idleTimeout: TimeAmount = .seconds(60)
        /// Creates the defaults.
        public init() {}
    }

    /// Why a client is sent away.
    public enum Rejection: Sendable, Hashable {
        /// A line longer than ``Limits/maxLineBytes``.
        case lineTooLong(limit: Int)
        /// ``Limits/maxClients`` connections are open already.
        case tooManyClients(limit: Int)
    }

    /// Why the server could not be created.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, naming the path.
        public let description: String
    }

    /// The socket's path.
    public let path: String
    private let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
    private let limits: Limits
    private let clients = Mutex(0)
    private let logger: Logger

    private init(path: String, server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, limits: Limits,
                 logger: Logger) {
        self.path = path
        self.server = server
        self.limits = limits
        self.logger = logger
    }

    /// Binds the socket at `path` (mode 0600), replacing a stale socket nobody listens on.
    /// - Parameters:
    ///   - path: where the socket goes (at most 107 bytes).
    ///   - limits: the server's bounds.
    ///   - logger: for diagnostics.
    /// - Returns: the server; serve with ``run(handler:reject:)``.
    /// - Throws: ``Failure`` when the path is taken (a listener, or not a socket) or cannot be bound.
    public static func bind(path: String, limits: Limits = Limits(), logger: Logger) async throws -> LocalLineServer {
        try clearStale(path)
        let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 16)
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: limits.idleTimeout))
                        try channel.pipeline.syncOperations.addHandler(CloseOnIdle())
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw Failure(description: "cannot listen on \(path): \(EventLoops.describe(error))")
        }
        guard chmod(path, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            try? await server.channel.close()
            throw Failure(description: "cannot make \(path) private: \(reason)")
        }
        return LocalLineServer(path: path, server: server, limits: limits, logger: logger)
    }

    /// Serves until ``close()``; then removes the socket file.
    /// - Parameters:
    ///   - handler: the answer line to a request line (both without `\n`).
    ///   - reject: the last line sent to a client sent away.
    public func run(handler: @escaping @Sendable ([UInt8]) async -> String,
                    reject: @escaping @Sendable (Rejection) -> String) async {
        do {
            try await server.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        group.addTask { await self.serve(connection, handler: handler, reject: reject) }
                    }
                    // Closed: the connections still open end too (an idle one would hold us up to its timeout).
                    group.cancelAll()
                }
            }
        } catch {
            logger.notice("control socket stopped: \(EventLoops.describe(error))", metadata: ["control.path": "\(path)"])
        }
        if unlink(path) != 0 && errno != ENOENT {
            logger.notice("cannot remove \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Stops accepting; ``run(handler:reject:)`` returns once the connections it serves end.
    public func close() async {
        try? await server.channel.close()
    }

    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, handler: @escaping @Sendable ([UInt8]) async -> String,
                       reject: @escaping @Sendable (Rejection) -> String) async {
        let admitted = clients.withLock { count in
            guard count < limits.maxClients else { return false }
            count += 1
            return true
        }
        defer { if admitted { clients.withLock { $0 -= 1 } } }
        let limit = limits.maxLineBytes
        let maxClients = limits.maxClients
        let sameUser = await Self.isSameUser(connection.channel)
        do {
            try await connection.executeThenClose { inbound, outbound in
                func say(_ line: String) async throws { try await outbound.write(ByteBuffer(string: line + "\n")) }
                guard let sameUser, sameUser else {
                    // nil: the client left before its credentials were read (a probe of isListening).
                    if sameUser == false {
                        logger.notice("control socket: refused a client of another user", metadata: ["control.path": "\(path)"])
                    }
                    return
                }
                guard admitted else {
                    logger.notice("control socket: refused a client", metadata: ["control.clients": "\(maxClients)"])
                    return try await say(reject(.tooManyClients(limit: maxClients)))
                }
                var lines = LineSplitter(maxLineBytes: limit)
                for try await buffer in inbound {
                    for piece in lines.append(buffer.readableBytesView) {
                        switch piece {
                        case .line(let line):
                            try await say(handler(line))
                        case .tooLong:
                            logger.notice("control socket: closed a client whose line was too long", metadata: ["control.limit": "\(limit)"])
                            return try await say(reject(.lineTooLong(limit: limit)))
                        }
                    }
                }
            }
        } catch {
            logger.debug("control socket client: \(EventLoops.describe(error))")
        }
    }

    /// Whether the process at the other end runs as this user (`SO_PEERCRED`); `nil` when that
    /// cannot be read (the client is gone).
    private static func isSameUser(_ channel: any Channel) async -> Bool? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let credentials: PeerCredentials? = try? await provider.unsafeGetSocketOption(level: .socket, name: .init(rawValue: SO_PEERCRED)).get()
        return credentials.map { $0.uid == getuid() }
    }

    /// Makes way for the socket: nothing at `path`, or a socket file nobody listens on (removed).
    static func clearStale(_ path: String) throws {
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw Failure(description: "the socket path \(path) is too long for a Unix domain socket; use a shorter data directory")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            guard errno == ENOENT else { throw Failure(description: "cannot inspect \(path): \(String(cString: strerror(errno)))") }
            return
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw Failure(description: "\(path) exists and is not a socket; remove it")
        }
        if isListening(path) {
            throw Failure(description: "another process listens on \(path)")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw Failure(description: "cannot remove the stale socket \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Whether a connection to the socket at `path` is accepted (a Unix socket connects or is
    /// refused at once).
    static func isListening(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return result == 0
    }

    /// Sends one request line to the server at `path` and returns its answer line.
    /// - Parameters:
    ///   - line: the request, without `\n`.
    ///   - path: the socket.
    ///   - maxReplyBytes: the longest answer taken.
    /// - Returns: the answer without `\n`, or `nil` when the server closed without one.
    /// - Throws: when the socket cannot be reached.
    public static func request(_ line: String, path: String, maxReplyBytes: Int = 65_536) async throws -> [UInt8]? {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: line + "\n"))
            var lines = LineSplitter(maxLineBytes: maxReplyBytes)
            for try await buffer in inbound {
                for piece in lines.append(buffer.readableBytesView) {
                    if case .line(let reply) = piece { return reply }
                    return nil
                }
            }
            return nil
        }
    }
}

/// Splits a byte stream into lines ended by `\n` (pure), bounded: a line longer than the limit
/// yields ``Piece/tooLong`` once and nothing after it.
public struct LineSplitter: Sendable {
    /// A piece of the stream.
    public enum Piece: Sendable, Hashable {
        /// A whole line, without `\n`.
        case line([UInt8])
        /// A line passed the limit; the stream is done.
        case tooLong
    }

    /// The longest line, without its `\n`.
    public let maxLineBytes: Int
    private var pending: [UInt8] = []
    private var failed = false

    /// Creates a splitter.
    /// - Parameter maxLineBytes: the longest line, without its `\n`.
    public init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Takes the next bytes of the stream.
    /// - Parameter bytes: the bytes.
    /// - Returns: the lines they complete, in order, then `tooLong` if the limit was passed.
    public mutating func append(_ bytes: some Sequence<UInt8>) -> [Piece] {
        guard !failed else { return [] }
        var pieces: [Piece] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                pieces.append(.line(pending))
                pending.removeAll(keepingCapacity: true)
            } else if pending.count >= maxLineBytes {
                failed = true
                pending = []
                pieces.append(.tooLong)
                return pieces
            } else {
                pending.append(byte)
            }
        }
        return pieces
    }
}

/// `struct ucred` of `SO_PEERCRED` (Glibc hides it behind `_GNU_SOURCE`).
private struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Closes a channel that read nothing for the `IdleStateHandler`'s time.
private final class CloseOnIdle: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}

@available(*, unavailable)
extension CloseOnIdle: Sendable {}
