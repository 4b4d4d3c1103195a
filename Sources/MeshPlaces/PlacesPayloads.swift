/// A message of the places application (PROTOCOL.md §14): a lookup, an answer, a pin, a
/// withdrawal or a pin catch-up; the whole payload of a message on ``MeshSession/ChannelID/places``.
public typealias PlacesPayload = Meshchat_Places_V1_Places
/// The place data sets a node answers lookups from: its attachment on channel 3 (§14.1).
public typealias PlaceSetsPayload = Meshchat_Places_V1_PlaceSets
/// A place data set a node holds (§14.1).
public typealias PlaceSetPayload = Meshchat_Places_V1_PlaceSet
/// A lookup of places near a point (§14.2).
public typealias PlaceQueryPayload = Meshchat_Places_V1_PlaceQuery
/// The answer to a lookup (§14.3).
public typealias PlaceAnswerPayload = Meshchat_Places_V1_PlaceAnswer
/// One place in an answer (§14.3).
public typealias PlaceHitPayload = Meshchat_Places_V1_PlaceHit
/// A pin shared with the mesh (§14.4).
public typealias PinPayload = Meshchat_Places_V1_Pin
/// The withdrawal of a pin by its author (§14.4).
public typealias PinWithdrawalPayload = Meshchat_Places_V1_PinWithdrawal
/// All of a node's live pins, for a node that just became reachable (§14.4).
public typealias PinSetPayload = Meshchat_Places_V1_PinSet
