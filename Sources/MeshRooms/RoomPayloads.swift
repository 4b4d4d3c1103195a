/// A line to a room, sealed with the room's key (PROTOCOL.md §15.2): the payload of a signed
/// broadcast on ``MeshSession/ChannelID/rooms``.
public typealias RoomChatPayload = Meshchat_Rooms_V1_RoomChat
/// The plaintext of a ``RoomChatPayload`` (PROTOCOL.md §15.2).
public typealias RoomTextPayload = Meshchat_Rooms_V1_RoomText
