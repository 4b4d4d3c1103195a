/// One key press (or one paste) read from a terminal in raw mode, as ``KeyDecoder`` decodes it.
///
/// Keys are named for what the terminal sent, not for what they do: ``LineEditor`` binds them
/// (Ctrl-A is `.control("a")`, and the editor moves to the start of the line). Printable text is
/// never mixed with control characters: `.text` holds only characters that may be inserted.
public enum TerminalKey: Sendable, Hashable {
    /// Printable characters typed in one go (one key, or several when input arrives faster than
    /// it is read); never contains control characters.
    case text(String)
    /// A bracketed paste (`ESC [200~` … `ESC [201~`): the pasted text with its line breaks and
    /// tabs turned into spaces and other control characters removed.
    case paste(String)
    /// Enter or Return (CR, LF, or the keypad's `ESC O M`).
    case enter
    /// Tab (Ctrl-I).
    case tab
    /// Backspace: DEL (0x7F) or BS (Ctrl-H).
    case backspace
    /// The Delete key (`ESC [3~`).
    case delete
    /// Arrow up.
    case up
    /// Arrow down.
    case down
    /// Arrow left.
    case left
    /// Arrow right.
    case right
    /// Ctrl or Alt with arrow left (`ESC [1;5D`, `ESC [1;3D`), or Alt-B: a word to the left.
    case wordLeft
    /// Ctrl or Alt with arrow right, or Alt-F: a word to the right.
    case wordRight
    /// Home in any of its forms (`ESC [H`, `ESC OH`, `ESC [1~`, `ESC [7~`).
    case home
    /// End in any of its forms (`ESC [F`, `ESC OF`, `ESC [4~`, `ESC [8~`).
    case end
    /// Page up (`ESC [5~`).
    case pageUp
    /// Page down (`ESC [6~`).
    case pageDown
    /// Escape followed by nothing the decoder knows; the editor ignores it.
    case escape
    /// Ctrl with a letter (`a`…`z`), other than the letters that are keys of their own
    /// (Ctrl-H is ``backspace``, Ctrl-I ``tab``, Ctrl-J and Ctrl-M ``enter``).
    case control(Character)
    /// Alt (Meta) with a printable character, sent as ESC and the character; Alt-B and Alt-F are
    /// ``wordLeft`` and ``wordRight``.
    case alt(Character)
    /// Alt-Backspace (ESC DEL): delete the word before the cursor.
    case altBackspace
}
