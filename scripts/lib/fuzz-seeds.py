#!/usr/bin/env python3
"""Writes the seed inputs of scripts/fuzz into Tests/FuzzCorpus/<target>/seed-* from the golden
vectors in Protocol/vectors and small hand-made messages (run from the package root; idempotent).
Inputs found by fuzzing live beside them as crash-*/found-* files and are never rewritten."""
import gzip, json, os, struct, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
corpus = os.path.join(root, "Tests", "FuzzCorpus")
vectors = os.path.join(root, "Protocol", "vectors")

def load(name):
    with open(os.path.join(vectors, name + ".json")) as f:
        return json.load(f)

def write(target, name, data):
    directory = os.path.join(corpus, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "seed-" + name), "wb") as f:
        f.write(data)

# Protobuf encoding, enough for the seeds.
def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while n >= 0x80:
        out += bytes([(n & 0x7F) | 0x80]); n >>= 7
    return out + bytes([n])
def field(number, data):  # length-delimited
    if isinstance(data, str): data = data.encode()
    return varint(number << 3 | 2) + varint(len(data)) + data
def uint(number, n): return varint(number << 3) + varint(n)
def double(number, x): return varint(number << 3 | 1) + struct.pack("<d", x)

def walk(value):
    if isinstance(value, dict):
        yield value
        for v in value.values(): yield from walk(v)
    elif isinstance(value, list):
        for v in value: yield from walk(v)

def hexes(document, *keys):
    for entry in walk(document):
        for key in keys:
            if isinstance(entry.get(key), str) and all(c in "0123456789abcdef" for c in entry[key]):
                yield entry.get("name", key), bytes.fromhex(entry[key])

def strip_envelope(envelope):
    """The body of an Envelope's one length-delimited field (tag, length, body)."""
    i = 0
    while envelope[i] & 0x80: i += 1
    i += 1
    length, shift = 0, 0
    while True:
        b = envelope[i]; i += 1
        length |= (b & 0x7F) << shift; shift += 7
        if b < 0x80: break
    return envelope[i:i + length]

frames, records, envelopes, datagrams = load("frames"), load("records"), load("envelopes"), load("datagrams")
handshake, mesh = load("handshake"), load("mesh")
for name, data in hexes(frames, "bytes"): write("frame", name, data)
for name, data in hexes(handshake, "frame"): write("frame", "handshake-" + name, data)
everything = b""
for name, data in hexes(records, "bytes"):
    write("record", name, bytes([len(data)]) + data)
    everything += bytes([len(data)]) + data
write("record", "all", everything)
for name, data in hexes(envelopes, "bytes"): write("envelope", name, data)
for name, data in hexes(mesh, "envelope"): write("envelope", "mesh-" + name, data)
for name, data in hexes(datagrams, "datagram"): write("datagram", name, data)
for name, data in hexes(handshake, "payload"): write("handshake", name, data)
for name, data in hexes(mesh, "envelope"): write("routed", name, strip_envelope(data))
for entry in mesh["cases"]:
    body = bytes.fromhex(entry["body"])
    if entry["name"] == "linkState":
        place_set = field(1, "london.geojson") + uint(2, 5) + double(3, 51.4) + double(4, -0.2) + double(5, 51.6) + double(6, 0.0)
        write("advert", "linkState", body)
        write("advert", "linkState-placeSet", body + field(5, place_set))
    if entry["name"] == "linkStatePlaces":
        write("advert", "linkStatePlaces", body)
    if entry["name"] in ("sealed", "placeQuery"):
        write("sealed", entry["name"], body)

query_id = bytes(range(16))
def query(lat, lon, radius, text, limit):
    return field(1, field(1, query_id) + double(2, lat) + double(3, lon) + double(4, radius) + field(5, text) + uint(6, limit))
write("places", "query", query(51.5074, -0.1278, 1000, "pizza", 20))
write("places", "query-radius-1e19", query(51.5, -0.12, 1e19, "", 20))  # the remote crash of issue 13
write("places", "query-radius-minus-1e308", query(51.5, -0.12, -1e308, "", 20))
write("places", "query-radius-nan", query(51.5, -0.12, float("nan"), "", 20))
write("places", "query-limit-huge", query(51.5, -0.12, 1000, "", 0xFFFFFFFF))
write("places", "query-latitude-huge", query(1e300, -0.12, 1000, "", 20))
hit = field(1, "Pizza Express") + double(2, 51.508) + double(3, -0.128) + field(4, "london.geojson")
write("places", "answer", field(2, field(1, query_id) + field(2, hit) + uint(3, 1)))
write("places", "answer-refused", field(2, field(1, query_id) + field(4, "rate limited")))
pin = field(1, query_id) + double(2, 51.5) + double(3, -0.12) + field(4, "Meet here") + field(5, "by the lions") \
    + uint(6, 1_800_000_000_000) + uint(7, 1_800_003_600_000)
write("places", "pin", field(3, pin))
write("places", "unpin", field(4, field(1, query_id)))
write("places", "pins", field(5, field(1, pin) + field(1, pin)))
write("pins", "pin", pin)
write("pins", "pin-far-future", field(1, query_id) + field(4, "x") + uint(6, (1 << 63) - 1) + uint(7, 1 << 63))

transfer = field(1, bytes(range(16)))
write("files", "offer", transfer + field(2, field(1, "a.txt") + uint(2, 100_000) + field(3, bytes(32)) + uint(4, 1024)))
write("files", "chunk", transfer + field(3, uint(1, 3) + field(2, bytes(1024))))
write("files", "chunk-last", transfer + field(3, uint(1, 97) + field(2, bytes(672))))
write("files", "ack", transfer + field(4, uint(1, 2) + field(2, varint(5) + varint(7))))
write("files", "done", transfer + field(5, field(1, bytes(32))))
write("files", "cancel", transfer + field(6, uint(1, 2) + field(2, "no room")))

write("rooms", "text", field(1, "#lunch") + field(2, bytes(range(16))) + field(3, "hello") + uint(4, 1_800_000_000_000))
write("rooms", "chat", field(1, bytes(16)) + field(2, bytes(12)) + field(3, bytes(40)))
write("rooms", "name", b"#Lunch")

def txt(*strings): return b"".join(bytes([len(s)]) + s for s in strings)
write("txt", "record", txt(b"_v=1", b"_id=56475aa75463474c0285df5dbf2bcab7", b"_n=alice", b"room=lunch"))
write("txt", "no-value", txt(b"_v=1", b"_id=56475aa75463474c0285df5dbf2bcab7", b"_n=bob", b"flag"))

write("config", "full", b'name = "alice"\nport = 7000\nconnect = ["127.0.0.1:7001", "[::1]:7002"]\n'
      b'data_dir = "~/meshchat"\nhop_limit = 7\nlog_level = "info"\nplaces = ["london.geojson"]\n')
write("config", "bad", b'port = 99999999999999999999\nhop_limit = -1\n')

write("command", "lines", "/near 5km pizza\n/near 99999999999999999999km\n/pin 51.5,-0.12 \"Meet here\" lions\n"
      "/connect [::1]:7000\n/msg bob hi\n/here 51.5074,-0.1278\n/unpin 2\n/map 3\n51.5,-0.12,51.6,0.1\n1e308m\n".encode())
write("control", "requests", b'{"op":"send","to":"@carol","text":"hi"}\n{"op":"send","to":"#dev","text":"x"}\n'
      b'{"op":"send","text":"to all"}\n{"op":"send","text":"x","to":"a\\u0000b"}\n[[[[1]]]]\n{"op":"send","text":5}\n')
write("keys", "sequences", b"abc\x1b[A\x1b[1;5C\x1b[200~pasted\x1b[201~\x7f\x03\xc3\xa9\x1b[99999999999999999999;9~\x1bO")

geojson = ('{"type":"FeatureCollection","features":['
           '{"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1280,51.5080]},"properties":{"name":"Pizza Express"}},'
           '{"type":"Feature","geometry":{"type":"Point","coordinates":[-0.1300,51.5070]},"properties":{"name":"Caf\\u00e9 Nero"}}]}').encode()
csv = b"name,latitude,longitude\nPizza Express,51.5080,-0.1280\n\"Caf\xc3\xa9, Nero\",51.5070,-0.1300\n"
write("placedata", "geojson", b"\x00" + geojson)
write("placedata", "csv", b"\x01" + csv)
write("placedata", "tsv", b"\x02" + csv.replace(b",", b"\t"))
write("placedata", "geojson-gz", b"\x00" + gzip.compress(geojson, mtime=0))
