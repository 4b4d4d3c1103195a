import Foundation
import MeshPlaces
import MeshSession
import Places
import Synchronization

extension ChatFront {
    /// The radius of `/near` and `/map` when none is given: 2 km.
    static let defaultRadius = Distance.kilometres(2)

    /// Runs `/here`, `/near`, `/pin`, `/pins`, `/unpin` and `/map`.
    func handlePlaces(_ command: ChatCommand) async {
        do {
            switch command {
            case .here(let point?):
                try await places.setHere(point)
                emit(.here(point, description: describe(point)))
            case .here(nil):
                let point = try await places.here()
                emit(.here(point, description: point.flatMap(describe)))
            case .near(let radius, let text):
                guard let here = try await places.here() else {
                    emit(.error("/near: set your location first with /here LAT,LON"))
                    return
                }
                let lookup = try PlaceLookup(centre: here, radius: radius ?? Self.defaultRadius, text: text)
                memory.lastLookup = lookup
                let result = await places.lookup(lookup)
                memory.lastResults = result.hits
                emit(.places(result))
            case .nearMore(let limit):
                guard let last = memory.lastLookup else { return emit(.error("/near more: run /near first")) }
                let lookup = try PlaceLookup(centre: last.centre, radius: last.radius, text: last.text, limit: limit)
                let result = await places.lookup(lookup)
                memory.lastResults = result.hits
                emit(.places(result))
            case .pin(let target, let note):
                let point: Coordinate
                let label: String
                switch target {
                case .point(let coordinate, let text):
                    point = coordinate
                    label = text
                case .result(let n):
                    let results = memory.lastResults
                    guard n <= results.count else {
                        emit(.error(results.isEmpty ? "/pin \(n): no /near result to pin yet" : "/pin \(n): the last /near showed \(results.count) places"))
                        return
                    }
                    point = results[n - 1].coordinate
                    label = Self.clippedLabel(results[n - 1].name)
                }
                let (pin, nobody) = try await places.pin(point, label: label, note: note)
                emit(.pinned(pin, sentToNobody: nobody))
            case .pins(let file?):
                let pins = try await places.pins()
                try PinsGeoJSON.write(pins, to: file)
                emit(.exported(file: file, count: pins.count))
            case .pins(nil):
                let pins = try await places.pins()
                memory.lastPins = pins
                emit(.pins(pins, from: try await places.here()))
            case .unpin(let target):
                try await unpin(target)
            case .map(let radius):
                try await showMap(radius: radius ?? Self.defaultRadius)
            default:
                break
            }
        } catch let error as PlacesInputError {
            emit(.error("\(Self.name(of: command)): \(error.message)"))
        } catch {
            emit(.error("\(Self.name(of: command)): \(error)"))
        }
    }

    private func unpin(_ target: ChatCommand.UnpinTarget) async throws {
        let me = session.peer.peerID.id
        let mine = try await places.pins().filter { $0.author.id == me }
        let ids: [String]
        switch target {
        case .all:
            ids = mine.map(\.id)
            if ids.isEmpty { emit(.error("/unpin: you have no live pins")); return }
        case .only:
            guard mine.count == 1 else {
                emit(.error(mine.isEmpty ? "/unpin: you have no live pins" : "/unpin: you have \(mine.count) pins; /pins lists them, then /unpin N or /unpin all"))
                return
            }
            ids = [mine[0].id]
        case .listed(let n):
            let listed = memory.lastPins
            guard n <= listed.count else {
                emit(.error(listed.isEmpty ? "/unpin \(n): run /pins first" : "/unpin \(n): the last /pins showed \(listed.count) pins"))
                return
            }
            guard listed[n - 1].author.id == me else {
                emit(.error("/unpin \(n): \"\(listed[n - 1].label)\" is \(listed[n - 1].author.displayName)'s pin; only its author can withdraw it"))
                return
            }
            ids = [listed[n - 1].id]
        }
        let withdrawn = try await places.unpin(ids)
        if withdrawn.isEmpty { emit(.error("/unpin: that pin is no longer live")) }
        for pin in withdrawn { emit(.unpinned(pin, mine: true)) }
    }

    private func showMap(radius: Distance) async throws {
        guard let here = try await places.here() else {
            emit(.error("/map: set your location first with /here LAT,LON"))
            return
        }
        guard options.isTerminal && !options.json else {
            let view = MapView(centre: here, radius: radius, width: options.mapSize.width, height: options.mapSize.height)
            let (markers, pins) = try await mapMarkers(view, here: here)
            emit(.map(view.describe(places: markers, pins: pins)))
            return
        }
        guard let screen = options.screenSize?() else {
            let view = MapView(centre: here, radius: radius, width: options.mapSize.width, height: options.mapSize.height)
            let (markers, pins) = try await mapMarkers(view, here: here)
            return emit(.map(view.render(places: markers, pins: pins, colour: options.colour)))
        }
        memory.lastMapRadius = radius
        emit(.map(try await fittedMap(here: here, radius: radius, screen: screen)))
    }

    /// The map drawn for the terminal's size now (it may have been resized since the start).
    private func fittedMap(here: Coordinate, radius: Distance, screen: (columns: Int, rows: Int)) async throws -> [String] {
        try await MapView.fitting(centre: here, radius: radius, screen: screen) { view in
            let (markers, pins) = try await mapMarkers(view, here: here)
            return view.render(places: markers, pins: pins, colour: options.colour)
        }
    }

    /// The terminal was resized: the conversation looked at is drawn again from its scrollback
    /// for the new size (`/help` wraps again), the input line below it; a `/map` shown last is
    /// drawn anew for the new size first.
    func redrawForResize() async {
        if memory.showsMapLast, let radius = memory.lastMapRadius, let screen = options.screenSize?(),
           let here = try? await places.here(), let picture = try? await fittedMap(here: here, radius: radius, screen: screen) {
            memory.replaceLastMap(with: picture)
        }
        let (target, lines) = memory.activeScrollback
        emit(.target(target, scrollback: lines))
    }

    /// The places and pins within a map's reach.
    private func mapMarkers(_ view: MapView, here: Coordinate) async throws -> (places: [MapView.Marker], pins: [MapView.Marker]) {
        // The frame is a rectangle: its corners lie up to √(w²+h²)/min(w,h) radii away.
        let reach = Distance.metres(min(PlacesLimits.maxRadiusMetres, view.reach.metres))
        var markers: [MapView.Marker] = []
        if places.local.covers(here) {
            for set in places.local.sets {
                markers += set.index.within(reach, of: here).map { MapView.Marker($0.place) }
            }
        } else {
            let result = await places.lookup(try PlaceLookup(centre: here, radius: reach, limit: PlacesLimits.maxLimit))
            markers = result.hits.map { MapView.Marker($0.name, at: $0.coordinate) }
        }
        let pins = try await places.pins().map { MapView.Marker($0.label, at: $0.coordinate) }
        return (markers, pins)
    }

    /// Shows a places event.
    func show(_ change: PlacesEvent) async {
        switch change {
        case .pinAdded(let pin):
            emit(.pin(pin, from: try? await places.here()))
        case .pinWithdrawn(let pin):
            emit(.unpinned(pin, mine: false))
        }
    }

    /// "2.1 km NE of Clapham" from my data, or `nil` without data.
    private func describe(_ point: Coordinate) -> String? {
        let found = places.local.sets.compactMap { $0.index.describe(point) }
        return found.min { $0.distance < $1.distance }?.formatted()
    }

    private static func clippedLabel(_ name: String) -> String {
        var label = ""
        for character in name where label.utf8.count + character.utf8.count <= PlacesLimits.pinLabelBytes.upperBound {
            label.append(character)
        }
        return label
    }

    private static func name(of command: ChatCommand) -> String {
        switch command {
        case .here: "/here"
        case .near, .nearMore: "/near"
        case .pin: "/pin"
        case .pins: "/pins"
        case .unpin: "/unpin"
        case .map: "/map"
        default: "command"
        }
    }
}
