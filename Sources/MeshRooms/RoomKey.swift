import Crypto
import CryptoExtras
import struct Foundation.Data
import MeshSession
import SwiftProtobuf

/// The key of a room (PROTOCOL.md §15): lines to the room are encrypted with it, so only those
/// who know the room's name, and its password when it has one, can read them.
///
/// - A room without a password has the key SHA-256("meshchat public room v1" ‖ name): anyone who
///   knows the name reads it; relays that do not see only a room id.
/// - A room with a password has the key scrypt(password, salt "meshchat room v1" ‖ name,
///   N = 2^15, r = 8, p = 1, 32 bytes): knowing the name is not enough, and guessing passwords
///   costs a scrypt per guess.
///
/// A pure value; deriving a password key takes about 0.1 s and 32 MiB, so do it off event loops.
public struct RoomKey: Sendable, Hashable {
    /// The room's name, normalised: `#` and 1–32 of `a-z 0-9 - _`.
    public let name: String
    /// Whether the key comes from a password.
    public let hasPassword: Bool
    /// The 32-byte key.
    public let key: Data
    /// The room id every line carries: the first 16 bytes of SHA-256("meshchat room id v1" ‖ key).
    public let id: Data

    /// The scrypt cost parameters of §15.1.
    public static let scryptRounds = 1 << 15
    /// See ``scryptRounds``.
    public static let scryptBlockSize = 8
    /// Bytes of UTF-8 in a password: 1–256.
    public static let passwordBytes = 1...256

    /// Derives a room's key.
    /// - Parameters:
    ///   - name: the room's name, with or without `#`, any case (normalised by ``normalizedName(_:)``).
    ///   - password: the password, or `nil` for a room anyone who knows the name may read.
    /// - Throws: ``RoomError`` naming what was wrong with the name or password.
    public init(name: String, password: String? = nil) throws(RoomError) {
        let normalized = try Self.normalizedName(name)
        var material: Data
        if let password {
            guard Self.passwordBytes.contains(password.utf8.count) else {
                throw RoomError("a room password is 1 to 256 bytes, got \(password.utf8.count)")
            }
            do {
                let key = try KDF.Scrypt.deriveKey(from: Array(password.utf8), salt: Array("meshchat room v1\(normalized)".utf8),
                                                   outputByteCount: 32, rounds: Self.scryptRounds, blockSize: Self.scryptBlockSize,
                                                   parallelism: 1)
                material = key.withUnsafeBytes { Data($0) }
            } catch {
                throw RoomError("deriving the room key failed: \(error)")
            }
        } else {
            material = Data(SHA256.hash(data: Data("meshchat public room v1\(normalized)".utf8)))
        }
        self.name = normalized
        self.hasPassword = password != nil
        self.key = material
        self.id = Self.roomID(key: material)
    }

    /// A key read back from storage.
    /// - Parameters:
    ///   - name: the normalised name.
    ///   - key: the 32-byte key.
    ///   - hasPassword: whether it came from a password.
    /// - Throws: ``RoomError`` when the name or key size is wrong.
    public init(name: String, key: Data, hasPassword: Bool) throws(RoomError) {
        guard key.count == 32 else { throw RoomError("a room key has 32 bytes, got \(key.count)") }
        self.name = try Self.normalizedName(name)
        self.key = key
        self.hasPassword = hasPassword
        self.id = Self.roomID(key: key)
    }

    private static func roomID(key: Data) -> Data {
        Data(SHA256.hash(data: Data("meshchat room id v1".utf8) + key).prefix(16))
    }

    /// A room name as §15.1 has it: lower case, with a leading `#`, 1–32 characters of `a-z 0-9 - _` after it.
    /// - Parameter name: what the user typed (`#Lunch`, `lunch`).
    /// - Returns: the normalised name (`#lunch`).
    /// - Throws: ``RoomError`` naming the rule broken.
    public static func normalizedName(_ name: String) throws(RoomError) -> String {
        let bare = (name.hasPrefix("#") ? String(name.dropFirst()) : name).lowercased()
        guard (1...32).contains(bare.count) else { throw RoomError("a room name has 1 to 32 characters after #, \"\(name.prefix(40))\" has \(bare.count)") }
        guard bare.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }) else {
            throw RoomError("room name \"\(name.prefix(40))\" may hold only a-z, 0-9, - and _")
        }
        return "#" + bare
    }

    /// Encrypts a line for the room (§15.2).
    /// - Parameters:
    ///   - text: the line's plaintext (its `room` must be this room's name).
    ///   - origin: the sending node, bound into the AAD so the line cannot be re-sent as another's.
    /// - Returns: the `RoomChat`.
    public func seal(_ text: RoomTextPayload, origin: NodeID) -> RoomChatPayload {
        seal(text, origin: origin, nonce: ChaChaPoly.Nonce())
    }

    /// Seals with a given nonce: for test vectors only (a nonce must never repeat under one key).
    func seal(_ text: RoomTextPayload, origin: NodeID, nonce: ChaChaPoly.Nonce) -> RoomChatPayload {
        var chat = RoomChatPayload()
        chat.roomID = id
        // Sealing with a valid key and nonce cannot fail.
        // Serializing a message built in Swift cannot fail either.
        let box = try! ChaChaPoly.seal(try! text.serializedData(), using: SymmetricKey(data: key), nonce: nonce,
                                       authenticating: Self.aad(origin))
        chat.nonce = Data(nonce)
        chat.ciphertext = Data(box.ciphertext) + Data(box.tag)
        return chat
    }

    /// Decrypts a line for this room.
    /// - Parameters:
    ///   - chat: the `RoomChat` (its `room_id` must be this room's).
    ///   - origin: the node that signed the broadcast.
    /// - Returns: the plaintext.
    /// - Throws: ``RoomError`` when it is not this room's, is malformed, or does not open.
    public func open(_ chat: RoomChatPayload, origin: NodeID) throws(RoomError) -> RoomTextPayload {
        guard chat.roomID == id else { throw RoomError("the line is for another room") }
        guard chat.nonce.count == 12, chat.ciphertext.count >= 16 else {
            throw RoomError("a room line has a \(chat.nonce.count)-byte nonce and \(chat.ciphertext.count) bytes of ciphertext")
        }
        let plaintext: Data
        do {
            let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: chat.nonce), ciphertext: chat.ciphertext.dropLast(16),
                                               tag: chat.ciphertext.suffix(16))
            plaintext = try ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: Self.aad(origin))
        } catch {
            throw RoomError("a line for \(name) does not decrypt (altered, or re-sent by another node)")
        }
        let text: RoomTextPayload
        do {
            text = try RoomTextPayload(serializedBytes: plaintext)
        } catch {
            throw RoomError("a line for \(name) decrypts to a malformed message: \(error)")
        }
        guard text.room == name else { throw RoomError("a line with this room's key names another room (\(text.room.prefix(40)))") }
        return text
    }

    private static func aad(_ origin: NodeID) -> Data { Data("meshchat room v1".utf8) + Data(origin.bytes) }
}
