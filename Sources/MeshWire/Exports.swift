// The identifiers (`NodeID`, …) moved to MeshCore; re-exported so that code importing only
// MeshWire keeps seeing them.
@_exported import MeshCore
