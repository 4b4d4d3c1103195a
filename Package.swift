// swift-tools-version: 6.1
//
// meshchat: Multipeer-style peer-to-peer mesh chat for Linux.
//
// Layering (see ../shared/STYLE.md §2 and README.md "Architecture"):
//   MeshCore                   identifiers (NodeID, PeerID); no dependencies, not even Foundation
//   MeshWire, MeshNoise        pure codecs and cryptography (no sockets)
//   MeshRouting                pure link-state routing (adverts, shortest paths, relay decisions)
//   MeshLink                   pure per-connection state machines (handshake, secure channel, keepalive)
//   MeshTransport              the only target that touches NIOPosix sockets
//   CAvahi, MeshDiscovery      DNS-SD through avahi-daemon (libavahi-client), and the pure discovery model
//   MeshSession                the public Multipeer-style API
//   MeshStore                  persistent outbox, inbound ordering and chat history (SQLite via GRDB)
//   CZlib, Places              offline place data: loaders and an exact spatial index (no networking)
//   MeshChatKit, meshchat      the chat front: line mode for pipes, an interactive terminal otherwise
//   CRuntimeSymbols            dlsym for the release meshchat, whose Swift runtime is linked in
import PackageDescription
#if os(Linux)
import Glibc

/// Whether this machine's C library reads packed relative relocations (DT_RELR, glibc 2.36 and
/// later): a binary linked with them needs it (Ubuntu 22.04 has 2.35; Debian 12 has 2.36).
let libcReadsRELR: Bool = {
    // "glibc 2.36"
    var buffer = [CChar](repeating: 0, count: 64)
    guard confstr(Int32(_CS_GNU_LIBC_VERSION), &buffer, buffer.count) > 0 else { return false }
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let parts = text.split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
    guard parts.count >= 2 else { return false }
    return parts[0] > 2 || (parts[0] == 2 && parts[1] >= 36)
}()
#else
let libcReadsRELR = false
#endif

let package = Package(
    name: "meshchat",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "MeshSession", targets: ["MeshSession"]),
        .library(name: "MeshCore", targets: ["MeshCore"]),
        .library(name: "MeshNoise", targets: ["MeshNoise"]),
        .library(name: "MeshWire", targets: ["MeshWire"]),
        .library(name: "MeshDiscovery", targets: ["MeshDiscovery"]),
        .library(name: "MeshChat", targets: ["MeshChat"]),
        .library(name: "MeshFiles", targets: ["MeshFiles"]),
        .library(name: "MeshStore", targets: ["MeshStore"]),
        .library(name: "Places", targets: ["Places"]),
        .library(name: "MeshPlaces", targets: ["MeshPlaces"]),
        .library(name: "MeshRooms", targets: ["MeshRooms"]),
        .executable(name: "meshchat", targets: ["meshchat"]),
        .executable(name: "meshbench", targets: ["meshbench"]),
        .executable(name: "meshboard", targets: ["meshboard"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        // No traits: we use neither of its default ones (binary-delimited streams, field-mask utilities),
        // and SwiftPM passes their -D flags in an order that changes between invocations, so every
        // other build recompiled its modules (94 files) and scripts/meshchat rebuilt for no reason.
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // Identifiers shared by every layer (NodeID, PeerID): no dependencies at all.
        .target(name: "MeshCore"),
        // Frames, records, datagrams and the protobuf envelope: pure codecs over ByteBuffer.
        .target(
            name: "MeshWire",
            dependencies: [
                "MeshCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        // Pure link-state routing: advert database, shortest paths, relay and broadcast decisions.
        .target(name: "MeshRouting", dependencies: ["MeshWire"]),
        // Noise Protocol Framework (25519, ChaChaPoly, SHA256) on swift-crypto.
        .target(
            name: "MeshNoise",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // Pure end-to-end sessions: signed prekeys, the X3DH agreement and the Double Ratchet.
        .target(
            name: "MeshRatchet",
            dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto")]
        ),
        // Pure identity trust: safety numbers, key rotation statements, names bound to keys (TOFU).
        .target(
            name: "MeshTrust",
            dependencies: ["MeshCore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // Pure per-link state machines: identity, handshake, secure channel, keepalive, replay window.
        .target(
            name: "MeshLink",
            dependencies: [
                "MeshWire", "MeshNoise", "MeshRatchet",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // SwiftNIO sockets: TCP listener/connector, UDP socket, channel handlers driving MeshLink.
        .target(
            name: "MeshTransport",
            dependencies: [
                "MeshLink", "MeshWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libavahi-client (C), the system's mDNS/DNS-SD daemon client, loaded with dlopen on first
        // use (shim.c) so that a process that never discovers does not map it, libdbus and libsystemd.
        // Building needs its headers (apt: libavahi-client-dev); running without discovery needs nothing.
        .target(
            name: "CAvahi",
            cSettings: [.define("_REENTRANT")],
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // DNS-SD discovery: TXT codec and peer directory (pure), Avahi and in-memory backends.
        .target(
            name: "MeshDiscovery",
            dependencies: [
                "CAvahi", "MeshCore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The public Multipeer-style API: PeerID, Session, advertiser, browser, invitations, events.
        .target(
            name: "MeshSession",
            dependencies: [
                "MeshCore", "MeshTransport", "MeshLink", "MeshWire", "MeshDiscovery", "MeshRouting", "MeshTrust",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        // Files for the chat (`/send`, PROTOCOL.md §16.6): session resources, stored under safe names.
        .target(name: "MeshFiles", dependencies: ["MeshSession", .product(name: "Logging", package: "swift-log")]),
        // Persistent outbox, inbound ordering and chat history in SQLite (GRDB); no networking.
        .target(
            name: "MeshStore",
            dependencies: [
                "MeshCore",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The chat application on channel 1 (PROTOCOL.md §17): lines, private lines, receipts, outbox,
        // history.
        .target(
            name: "MeshChat",
            dependencies: [
                "MeshSession", "MeshStore", "MeshRooms",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Rooms over the mesh (PROTOCOL.md §15): room keys, and lines sealed to a room on channel 2.
        .target(
            name: "MeshRooms",
            dependencies: [
                "MeshSession",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // zlib (C), for reading gzip-compressed place data sets.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Offline places: GeoJSON/CSV loaders and an exact great-circle spatial index; no networking.
        .target(name: "Places", dependencies: ["CZlib"]),
        // Places over the mesh (PROTOCOL.md §14): lookups answered and asked across hops, pins.
        .target(
            name: "MeshPlaces",
            dependencies: [
                "Places", "MeshSession", "MeshStore",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The chat front's logic: line commands, rendering, JSON events, the REPL loop, the terminal.
        .target(
            name: "MeshChatKit",
            dependencies: [
                "MeshSession", "MeshDiscovery", "MeshChat", "MeshFiles", "MeshStore", "MeshPlaces", "MeshRooms", "Places", "MeshLink", "MeshTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        // dlsym for the release build of meshchat, whose Swift runtime is linked in (below): answers
        // swift_task_enqueueGlobal_hook, which SwiftNIO looks up to run tasks on its event loops.
        .target(
            name: "CRuntimeSymbols",
            cSettings: [.define("MESHCHAT_WRAP_DLSYM", .when(platforms: [.linux], configuration: .release))]
        ),
        // Release builds link for an idle peer's memory (issue 16 item 7; `meshbench idle`, 5
        // interleaved rounds: 36.1 MB dynamic, 26.5 MB static):
        // - the Swift runtime and Foundation are linked in (-static-stdlib), so that only the pages an
        //   idle peer touches are resident, with no per-library relocations, GOT and data pages, and
        //   the runtime's functions (one section each in its archives) are ordered with ours. The
        //   objects were compiled against the shared Foundation, whose library holds CoreFoundation,
        //   ICU and Foundation's collections inside it, so those archives are named here. The driver
        //   links them with --exclude-libs ALL, so dlsym finds none of their symbols: --wrap=dlsym
        //   (CRuntimeSymbols) answers the one SwiftNIO asks for. --no-export-dynamic: our own
        //   symbols stay out of the dynamic symbol table, whose look-ups touched 2.7 MB of it.
        //   -L StaticCxx: its libstdc++.so is a linker script naming libstdc++.a (GCC's, beside the
        //   shared one), so that ICU's and TOMLKit's C++ library is linked in too (1.2 MB less).
        // - lld (in the toolchain): the code an idle peer runs from start-up on (startup.order, made
        //   by scripts/startup-order) is placed first, so that the kernel's 64 KB fault-around maps
        //   less of the binary (lld moves whole sections: one per function where the compiler emits
        //   one, otherwise a source file's code);
        // - relative relocations are packed (DT_RELR, glibc 2.36+), so that the dynamic loader reads
        //   a fraction of them.
        .executableTarget(
            name: "meshchat",
            dependencies: [
                "MeshChatKit", "MeshSession", "MeshTransport", "MeshDiscovery", "MeshChat", "MeshFiles", "MeshStore", "MeshPlaces", "Places",
                "CRuntimeSymbols",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["startup.order", "StaticCxx"],
            linkerSettings: [
                .unsafeFlags([
                    "-use-ld=lld",
                    "-static-stdlib", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCShims", "-l_FoundationCollections",
                    "-Xlinker", "--wrap=dlsym", "-Xlinker", "--no-export-dynamic",
                    "-L", "\(Context.packageDirectory)/Sources/meshchat/StaticCxx",
                    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/meshchat/startup.order",
                    "-Xlinker", "--no-warn-symbol-ordering",
                ] + (libcReadsRELR ? ["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"] : []),
                .when(platforms: [.linux], configuration: .release)),
            ]
        ),
        // Benchmarks: meshchat sessions beside a raw-TCP baseline with the same framing.
        .executableTarget(
            name: "meshbench",
            dependencies: [
                "MeshSession", "MeshTransport", "MeshLink", "MeshNoise", "MeshWire",
                "MeshRouting", "MeshTestSupport", "MeshChat", "MeshStore", "Places", "MeshRatchet",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Examples/: programs built on the public library API only, as a third party would write them.
        .executableTarget(
            name: "meshboard",
            dependencies: [
                "MeshSession", "MeshDiscovery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/meshboard",
            exclude: ["README.md"]
        ),
        // netcat across the mesh on streams: an example built only on the public library API.
        .executableTarget(
            name: "meshcat",
            dependencies: ["MeshSession", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/meshcat",
            exclude: ["README.md"]
        ),
        // Test helpers shared by the test targets (not a product).
        .target(
            name: "MeshTestSupport",
            dependencies: [
                "MeshRouting", "MeshWire", "MeshLink", "MeshTransport", "MeshSession", "MeshRatchet",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "MeshCoreTests", dependencies: ["MeshCore"]),
        .testTarget(name: "MeshWireTests", dependencies: ["MeshWire", "MeshTestSupport"]),
        .testTarget(name: "MeshRoutingTests", dependencies: ["MeshRouting", "MeshWire", "MeshTestSupport"]),
        .testTarget(name: "MeshTrustTests", dependencies: ["MeshTrust", "MeshTestSupport"]),
        .testTarget(name: "MeshRatchetTests", dependencies: ["MeshRatchet", "MeshTestSupport"]),
        .testTarget(name: "MeshNoiseTests", dependencies: ["MeshNoise", "MeshTestSupport"], exclude: ["Fixtures"]),
        .testTarget(
            name: "MeshLinkTests",
            dependencies: ["MeshLink", "MeshRatchet", "MeshTestSupport", "MeshRooms", "MeshPlaces", "MeshChat", .product(name: "SwiftProtobuf", package: "swift-protobuf")]
        ),
        .testTarget(
            name: "MeshTransportTests",
            dependencies: [
                "MeshTransport", "MeshLink", "MeshWire", "MeshTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "MeshSessionTests",
            dependencies: [
                "MeshSession", "MeshTransport", "MeshLink", "MeshWire", "MeshTestSupport", "MeshFiles", "MeshRatchet", "MeshRouting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        .testTarget(
            name: "MeshDiscoveryTests",
            dependencies: ["MeshDiscovery", "MeshCore", "MeshTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "MeshStoreTests",
            dependencies: ["MeshStore", "MeshCore", "MeshTestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(name: "MeshChatKitTests", dependencies: ["MeshChatKit", "MeshChat", "MeshFiles", "MeshSession", "MeshTestSupport"]),
        .testTarget(
            name: "MeshChatTests",
            dependencies: [
                "MeshChat", "MeshSession", "MeshStore", "MeshLink", "MeshTestSupport",
            ]
        ),
        .testTarget(
            name: "MeshPlacesTests",
            dependencies: ["MeshPlaces", "Places", "MeshSession", "MeshStore", "MeshWire", "MeshLink", "MeshTestSupport",
                           .product(name: "Logging", package: "swift-log"), .product(name: "SwiftProtobuf", package: "swift-protobuf")]
        ),
        .testTarget(
            name: "MeshRoomsTests",
            dependencies: ["MeshRooms", "MeshSession", "MeshTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "Logging", package: "swift-log"), .product(name: "SwiftProtobuf", package: "swift-protobuf")]
        ),
        // Optimised even in debug builds: the brute-force oracle scans ~300k real places per query.
        .testTarget(name: "PlacesTests", dependencies: ["Places", "CZlib"], exclude: ["PlacesProbe"], swiftSettings: [.unsafeFlags(["-O"])]),
        // The places loader alone in a process, for PlacesTests to read its peak memory (VmHWM).
        .executableTarget(name: "placesprobe", dependencies: ["Places"], path: "Tests/PlacesTests/PlacesProbe"),
        .testTarget(name: "IntegrationTests", dependencies: ["MeshTestSupport", "MeshWire", "MeshLink", .product(name: "Crypto", package: "swift-crypto")]),
        // Fuzz entry points for every decoder of outside input (scripts/README.md "Fuzzing"), and
        // the regression test that feeds them every input in Tests/FuzzCorpus.
        .target(
            name: "MeshFuzz",
            dependencies: [
                "MeshWire", "MeshLink", "MeshRouting", "MeshDiscovery", "MeshSession", "MeshChat", "MeshFiles",
                "MeshPlaces", "MeshRooms", "Places", "MeshChatKit", "MeshRatchet", "MeshTrust",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "MeshFuzzTests",
            dependencies: [
                "MeshFuzz", "MeshTestSupport", "MeshSession", "MeshPlaces", "MeshRooms", "MeshWire", "MeshLink", "Places",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
    ]
)

// The libFuzzer driver: built only by scripts/fuzz (MESHCHAT_FUZZ=1, `--sanitize=fuzzer`), since
// libFuzzer supplies its `main`.
if Context.environment["MESHCHAT_FUZZ"] != nil {
    package.targets.append(.executableTarget(name: "meshfuzz", dependencies: ["MeshFuzz"], path: "Fuzz/meshfuzz"))
}

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
