#!/usr/bin/env python3
"""An independent check of meshchat's link handshake vectors (PROTOCOL.md §4, §4.11, §5, §8.1),
written from the specification and Noise revision 34 alone with the `cryptography` package.

For Protocol/vectors/handshake.json (suite 1, ChaChaPoly), handshake-aesgcm.json (suite 2,
AESGCM) and handshake-retry.json (AESGCM refused with a RETRY, then ChaChaPoly) it runs Noise XX with the fixed static and ephemeral keys, the prologue of §4.2 and the
recorded payloads, and compares every HANDSHAKE frame, the handshake hash, the first TRANSPORT
frame in each direction and the datagram keys byte for byte. It also decodes each hello (§4.3)
and checks that the protocol name is the suite the two offers select (§4.11).

Usage: python3 Protocol/reference/handshake.py --check    (exit status 1 on any difference)
"""
import hashlib
import hmac
import json
import os
import struct
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

RAW = serialization.Encoding.Raw
SUITES = {1: "ChaChaPoly", 2: "AESGCM"}
# The protocol version (PROTOCOL.md §4.2): the hello's first field and the prologue's version byte.
PROTOCOL_VERSION = 8


def pub(private):
    return private.public_key().public_bytes(RAW, serialization.PublicFormat.Raw)


def hkdf(ck, ikm, outputs):
    temp = hmac.new(ck, ikm, hashlib.sha256).digest()
    out, previous = [], b""
    for i in range(1, outputs + 1):
        previous = hmac.new(temp, previous + bytes([i]), hashlib.sha256).digest()
        out.append(previous)
    return out


class Cipher:
    """A Noise CipherState for ChaChaPoly (nonce little-endian) or AESGCM (nonce big-endian)."""

    def __init__(self, name, key):
        self.name, self.key, self.n = name, key, 0

    def nonce(self, n):
        if self.name == "ChaChaPoly":
            return b"\x00" * 4 + struct.pack("<Q", n)
        return b"\x00" * 4 + struct.pack(">Q", n)

    def aead(self):
        return ChaCha20Poly1305(self.key) if self.name == "ChaChaPoly" else AESGCM(self.key)

    def encrypt(self, ad, plaintext):
        out = self.aead().encrypt(self.nonce(self.n), plaintext, ad)
        self.n += 1
        return out

    def decrypt(self, ad, ciphertext):
        out = self.aead().decrypt(self.nonce(self.n), ciphertext, ad)
        self.n += 1
        return out


class Symmetric:
    def __init__(self, protocol_name):
        name = protocol_name.encode()
        self.cipher_name = protocol_name.split("_")[3]
        self.h = name.ljust(32, b"\x00") if len(name) <= 32 else hashlib.sha256(name).digest()
        self.ck = self.h
        self.k = None

    def mix_hash(self, data):
        self.h = hashlib.sha256(self.h + data).digest()

    def mix_key(self, ikm):
        self.ck, temp = hkdf(self.ck, ikm, 2)
        self.k = Cipher(self.cipher_name, temp)

    def encrypt_and_hash(self, plaintext):
        out = self.k.encrypt(self.h, plaintext) if self.k else plaintext
        self.mix_hash(out)
        return out

    def decrypt_and_hash(self, ciphertext):
        out = self.k.decrypt(self.h, ciphertext) if self.k else ciphertext
        self.mix_hash(ciphertext)
        return out

    def split(self):
        k1, k2 = hkdf(self.ck, b"", 2)
        return Cipher(self.cipher_name, k1), Cipher(self.cipher_name, k2)


def dh(private, public):
    return private.exchange(X25519PublicKey.from_public_bytes(public))


def run_xx(vector, parties=None, payloads=None, initiator_ephemeral=None):
    """Noise XX between the vector's parties; returns the three messages, h, ck and Split()."""
    key = lambda hexed: X25519PrivateKey.from_private_bytes(bytes.fromhex(hexed))
    i, r = parties or (vector["initiator"], vector["responder"])
    i_s, i_e, r_s, r_e = key(i["staticPrivateKey"]), key(initiator_ephemeral or i["ephemeralPrivateKey"]), key(r["staticPrivateKey"]), key(r["ephemeralPrivateKey"])
    payloads = payloads or [bytes.fromhex(m["payload"]) for m in vector["messages"]]
    st = Symmetric(vector["protocolName"])
    st.mix_hash(bytes.fromhex(vector["prologue"]))
    # -> e
    m1 = pub(i_e)
    st.mix_hash(pub(i_e))
    m1 += st.encrypt_and_hash(payloads[0])
    # <- e, ee, s, es
    m2 = pub(r_e)
    st.mix_hash(pub(r_e))
    st.mix_key(dh(i_e, pub(r_e)))
    m2 += st.encrypt_and_hash(pub(r_s))
    st.mix_key(dh(i_e, pub(r_s)))
    m2 += st.encrypt_and_hash(payloads[1])
    # -> s, se
    m3 = st.encrypt_and_hash(pub(i_s))
    st.mix_key(dh(i_s, pub(r_e)))
    m3 += st.encrypt_and_hash(payloads[2])
    return [m1, m2, m3], st.h, st.ck, st.split()


def frame(frame_type, body):
    return struct.pack(">IB", len(body) + 1, frame_type) + body


def read_varint(data, i):
    """The protobuf varint at data[i]: (value, index after it)."""
    value, shift = 0, 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def varints(data):
    """Decodes a protobuf message of varint and length-delimited fields: {field: [values]}."""
    fields, i = {}, 0
    while i < len(data):
        tag, i = read_varint(data, i)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, i = read_varint(data, i)
            fields.setdefault(number, []).append(value)
        elif wire == 2:
            length, i = read_varint(data, i)
            fields.setdefault(number, []).append(data[i:i + length])
            i += length
        else:
            raise ValueError(f"wire type {wire}")
    return fields


def packed(values):
    """A repeated uint32 field, packed (one bytes value) or not: the list of numbers."""
    out = []
    for value in values:
        if isinstance(value, bytes):
            i = 0
            while i < len(value):
                number, i = read_varint(value, i)
                out.append(number)
        else:
            out.append(value)
    return out


def load_checked(path):
    """The vector at path, its list of problems, and expect(what, ok) that adds to the list."""
    with open(path) as f:
        vector = json.load(f)
    problems = []

    def expect(what, ok):
        if not ok:
            problems.append(f"{os.path.basename(path)}: {what}")

    return vector, problems, expect


def check(path, expected_suite):
    vector, problems, expect = load_checked(path)
    messages, h, ck, (i2r, r2i) = run_xx(vector)
    for index, (recorded, written) in enumerate(zip(vector["messages"], messages)):
        expect(f"frame of {recorded['name']}", recorded["frame"] == frame(1, written).hex())
    expect("handshake hash", vector["handshakeHash"] == h.hex())
    expect("protocol name", vector["protocolName"] == f"Noise_XX_25519_{SUITES[expected_suite]}_SHA256")

    # §4.3, §4.11: the hello's offer and suite; the protocol name is the suite the offers select.
    hello = varints(bytes.fromhex(vector["messages"][0]["payload"]))
    expect(f"hello version {PROTOCOL_VERSION}", hello.get(1) == [PROTOCOL_VERSION])
    expect("hello service type", hello.get(2) == [b"meshchat"])
    offer = packed(hello.get(3, []))
    expect("hello suite", hello.get(4) == [expected_suite])
    expect("hello retry_of absent", hello.get(5, [0]) == [0])
    responder = packed(varints(bytes.fromhex(vector["messages"][1]["payload"])).get(10, []))
    selected = next((s for s in offer if s in responder), None)
    expect(f"offers {offer} and {responder} select suite {expected_suite}", selected == expected_suite)
    names = [SUITES[s] for s in offer]
    expect("initiator's suites in the file", vector["initiator"]["suites"] == names)

    # §4.6, §5: the first transport frame in each direction, one FIN record at nonce 0.
    for t in vector["transport"]:
        cipher = i2r if t["from"] == "initiator" else r2i
        record = b"\x01" + bytes.fromhex(t["envelope"])
        expect(f"transport frame {t['name']}", t["frame"] == frame(2, cipher.encrypt(b"", record)).hex())

    # §8.1: HKDF-SHA256(salt ck, ikm empty, info label), 32 bytes.
    temp = hmac.new(ck, b"", hashlib.sha256).digest()
    value = lambda label: hmac.new(temp, label.encode() + b"\x01", hashlib.sha256).digest()
    keys = vector["datagramKeys"]
    expect("datagram key i2r", keys["keyI2R"] == value("meshchat udp key i2r").hex())
    expect("datagram key r2i", keys["keyR2I"] == value("meshchat udp key r2i").hex())
    expect("datagram tag i2r", keys["tagI2R"] == value("meshchat udp tag i2r")[:8].hex())
    expect("datagram tag r2i", keys["tagR2I"] == value("meshchat udp tag r2i")[:8].hex())
    return problems


def check_retry(path, keys_path):
    """handshake-retry.json: message 1 with AESGCM in clear, RETRY, then Noise XX on ChaChaPoly
    under the prologue with the retry appended and the second ephemeral key (§4.11)."""
    vector, problems, expect = load_checked(path)
    with open(keys_path) as f:
        keys = json.load(f)
    frames = {f["name"]: f for f in vector["frames"]}
    alice_e = X25519PrivateKey.from_private_bytes(bytes.fromhex(keys["initiator"]["ephemeralPrivateKey"]))
    first = frames["message1"]
    # Message 1 before any key: e ‖ hello in clear; its hello names suite 2 and offers 2 then 1.
    expect("message 1 is e ‖ hello", first["frame"] == frame(1, pub(alice_e) + bytes.fromhex(first["payload"])).hex())
    hello = varints(bytes.fromhex(first["payload"]))
    expect("message 1 offers [2, 1] and uses 2", packed(hello.get(3, [])) == [2, 1] and hello.get(4) == [2])
    expect("RETRY frame names suite 1", frames["retry"]["frame"] == frame(4, b"\x01").hex())
    again = varints(bytes.fromhex(frames["message1_again"]["payload"]))
    expect("retried hello: suite 1, retry_of 2", again.get(4) == [1] and again.get(5) == [2])
    base = b"meshchat\x00" + bytes([PROTOCOL_VERSION]) + b"\x00meshchat"
    expect("prologue with the retry", vector["prologue"] == (base + b"\x00retry\x02\x01").hex())
    expect("protocol name", vector["protocolName"] == "Noise_XX_25519_ChaChaPoly_SHA256")
    # The offers select suite 1: alice's first suite that bob offers.
    bob = packed(varints(bytes.fromhex(frames["message2"]["payload"])).get(10, []))
    expect("bob's offer in message 2 is [1]", bob == [1])
    payloads = [bytes.fromhex(frames[n]["payload"]) for n in ("message1_again", "message2", "message3")]
    messages, h, _, _ = run_xx(vector, parties=(keys["initiator"], keys["responder"]), payloads=payloads,
                               initiator_ephemeral=vector["retryEphemeralPrivateKey"])
    for name, written in zip(("message1_again", "message2", "message3"), messages):
        expect(f"frame of {name}", frames[name]["frame"] == frame(1, written).hex())
    expect("handshake hash", vector["handshakeHash"] == h.hex())
    return problems


def main():
    if sys.argv[1:] != ["--check"]:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors")
    problems = check(os.path.join(root, "handshake.json"), 1) + check(os.path.join(root, "handshake-aesgcm.json"), 2)
    problems += check_retry(os.path.join(root, "handshake-retry.json"), os.path.join(root, "handshake.json"))
    for problem in problems:
        print("MISMATCH", problem)
    print("handshake.py: " + ("ok: the three handshake vectors reproduced byte for byte" if not problems else f"{len(problems)} differences"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
