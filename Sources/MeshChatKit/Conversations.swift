import Foundation
import MeshFiles

/// The chat's conversations as a value (pure): the mesh, each room and each private
/// conversation is a buffer with its own bounded scrollback, and one of them is looked at.
///
/// Inputs and what they return:
/// - ``record(_:mention:at:)`` files an output in its buffer (``ChatTarget/of(_:)``; notices and
///   answers to commands go to the buffer being looked at) and says whether it is shown now
///   (``Placement/shown``) or only counted as unread in another buffer (``Placement/elsewhere(_:)``).
/// - ``select(_:)`` and ``select(number:)`` make a buffer the one looked at (opening it when
///   needed), clear its counts and return its scrollback, to be drawn again.
/// - ``status`` lists the buffers with their numbers and counts, for the status line.
///
/// Buffer 1 is always the mesh; the others are numbered in the order they opened. At most
/// ``maxBuffers`` are open: opening one more closes the oldest that is neither looked at nor the
/// mesh (its lines stay in the history). Each keeps its last ``maxLines`` outputs.
public struct Conversations: Sendable {
    /// Buffers kept open at once, the mesh included.
    public static let maxBuffers = 32
    /// Outputs kept in each buffer's scrollback.
    public static let maxLines = 1_000

    /// One output in a scrollback, with the time it was shown (a redraw shows the time it came).
    public struct Entry: Sendable {
        /// What was shown.
        public let output: ChatOutput
        /// When.
        public let at: Date

        /// Creates an entry.
        /// - Parameters:
        ///   - output: what was shown.
        ///   - at: when.
        public init(output: ChatOutput, at: Date) {
            self.output = output
            self.at = at
        }
    }

    /// One buffer as the status line shows it.
    public struct BufferStatus: Sendable, Hashable {
        /// Its number (from 1), for `/window N` and Alt-N.
        public let number: Int
        /// Its name (``ChatTarget/label``).
        public let label: String
        /// Lines that came while it was not looked at.
        public let unread: Int
        /// Of those, lines that mention me or are private.
        public let mentions: Int
        /// Whether it is the one looked at.
        public let isActive: Bool
    }

    /// Where ``record(_:mention:at:)`` put an output.
    public enum Placement: Sendable, Hashable {
        /// In the buffer looked at: show it now.
        case shown
        /// In another buffer (its number): counted as unread, not shown.
        case elsewhere(Int)
        /// Not a line of any buffer (it says where lines go, or the status itself).
        case none
    }

    private struct Buffer: Sendable {
        var target: ChatTarget
        var lines: [Entry] = []
        var unread = 0
        var mentions = 0
    }

    private var buffers = [Buffer(target: .mesh)]
    private var activeIndex = 0

    /// Creates the buffers with only the mesh, looked at.
    public init() {}

    /// The conversation looked at, where typed lines go.
    public var active: ChatTarget { buffers[activeIndex].target }

    /// The prompt of the input line for the conversation looked at: `[mesh] > `, `[#dev] > `, `[@bob] > `.
    public var prompt: String { Self.prompt(for: active) }

    /// The prompt for a conversation.
    /// - Parameter target: where typed lines go.
    /// - Returns: `[label] > `.
    public static func prompt(for target: ChatTarget) -> String { "[\(target.label)] > " }

    /// The buffers in order, for the status line.
    public var status: [BufferStatus] {
        buffers.enumerated().map { index, buffer in
            BufferStatus(number: index + 1, label: buffer.target.label, unread: buffer.unread, mentions: buffer.mentions,
                         isActive: index == activeIndex)
        }
    }

    /// The status line: every buffer with its number, the one looked at in brackets, unread
    /// counts in parentheses with `!` when some mention me: `[1:mesh] 2:#dev(3) 3:@bob(1!)`.
    public var statusLine: String { Self.statusLine(status) }

    /// The status line of a list of buffers (``statusLine``).
    /// - Parameter buffers: the buffers in order.
    /// - Returns: the line.
    public static func statusLine(_ buffers: [BufferStatus]) -> String {
        buffers.map { buffer in
            var text = "\(buffer.number):\(buffer.label)"
            if buffer.unread > 0 { text += "(\(buffer.unread)\(buffer.mentions > 0 ? "!" : ""))" }
            return buffer.isActive ? "[\(text)]" : text
        }.joined(separator: " ")
    }

    /// The scrollback of the buffer looked at, oldest first.
    public var scrollback: [Entry] { buffers[activeIndex].lines }

    // MARK: Inputs

    /// Files an output in its buffer.
    /// - Parameters:
    ///   - output: what the chat front shows.
    ///   - mention: the line mentions me (or is a private line to me): counted apart.
    ///   - at: when it is shown.
    /// - Returns: whether it is shown now or counted in another buffer.
    public mutating func record(_ output: ChatOutput, mention: Bool, at: Date) -> Placement {
        switch output {
        // A transfer's progress is the terminal's status row, not a line of any scrollback.
        case .target, .buffers, .bell, .file(.progress(_, bytes: _)): return .none
        default: break
        }
        let index: Int
        if let target = ChatTarget.of(output) {
            index = open(target)
        } else {
            index = activeIndex
        }
        if case .peer(let peer) = ChatTarget.of(output) { buffers[index].target = .peer(peer) }  // its latest name
        buffers[index].lines.append(Entry(output: output, at: at))
        if buffers[index].lines.count > Self.maxLines {
            buffers[index].lines.removeFirst(buffers[index].lines.count - Self.maxLines)
        }
        guard index != activeIndex else { return .shown }
        if case .message = output {
            buffers[index].unread += 1
            if mention { buffers[index].mentions += 1 }
        }
        return .elsewhere(index + 1)
    }

    /// Looks at a conversation, opening its buffer when needed.
    /// - Parameter target: the conversation.
    /// - Returns: its scrollback, oldest first.
    public mutating func select(_ target: ChatTarget) -> [Entry] {
        let index = open(target)
        buffers[index].target = target
        activeIndex = index
        buffers[index].unread = 0
        buffers[index].mentions = 0
        return buffers[index].lines
    }

    /// Replaces the last output of the buffer looked at when it is a `/map` picture (the same
    /// map drawn again for a resized terminal); it keeps the time it was shown.
    /// - Parameter lines: the new picture.
    /// - Returns: whether the last output was a map (and was replaced).
    public mutating func replaceLastMap(with lines: [String]) -> Bool {
        guard let last = buffers[activeIndex].lines.last, case .map = last.output else { return false }
        buffers[activeIndex].lines[buffers[activeIndex].lines.count - 1] = Entry(output: .map(lines), at: last.at)
        return true
    }

    /// Whether the last output of the buffer looked at is a `/map` picture.
    public var showsMapLast: Bool {
        guard let last = buffers[activeIndex].lines.last, case .map = last.output else { return false }
        return true
    }

    /// Empties the scrollback of the buffer looked at (`/clear`: the screen, not the stored history).
    /// - Returns: the conversation looked at.
    public mutating func clearScrollback() -> ChatTarget {
        buffers[activeIndex].lines = []
        return active
    }

    /// The conversation of a buffer number (`/window N`, Alt-N), or `nil` when there is none.
    /// - Parameter number: from 1.
    /// - Returns: its conversation.
    public func target(number: Int) -> ChatTarget? {
        guard number >= 1, number <= buffers.count else { return nil }
        return buffers[number - 1].target
    }

    /// Closes a conversation's buffer (a room left); the mesh's stays. When it was looked at,
    /// the mesh is looked at instead.
    /// - Parameter target: the conversation.
    /// - Returns: whether the one looked at changed.
    public mutating func close(_ target: ChatTarget) -> Bool {
        guard target.key != .mesh, let index = buffers.firstIndex(where: { $0.target.key == target.key }) else { return false }
        let wasActive = index == activeIndex
        buffers.remove(at: index)
        if wasActive {
            activeIndex = 0
        } else if index < activeIndex {
            activeIndex -= 1
        }
        return wasActive
    }

    /// The index of a conversation's buffer, opened (at the end) when it is not open; the oldest
    /// buffer that is neither the mesh nor looked at is closed when ``maxBuffers`` are open.
    private mutating func open(_ target: ChatTarget) -> Int {
        if let index = buffers.firstIndex(where: { $0.target.key == target.key }) { return index }
        if buffers.count >= Self.maxBuffers, let victim = buffers.indices.dropFirst().first(where: { $0 != activeIndex }) {
            buffers.remove(at: victim)
            if victim < activeIndex { activeIndex -= 1 }
        }
        buffers.append(Buffer(target: target))
        return buffers.count - 1
    }
}
