#!/usr/bin/env python3
"""An independent implementation of meshchat's end-to-end session keys (signed prekey, X3DH
without one-time prekeys, Double Ratchet), written from the specification alone with the
`cryptography` package. It writes Protocol/vectors/ratchet.json; the Swift tests reproduce it.

It also builds the sealed packets of protocol version 3 (§19.6: the ratchet carrying
`Routed.sealed`) from the fixed keys, each routing header and each sealed plaintext (`body`) of
Protocol/vectors/mesh.json (a session's first three messages) and of the other vector files'
sealed cases (each the first message of a new session), and checks them byte for byte.

Usage: python3 Protocol/reference/ratchet.py > Protocol/vectors/ratchet.json
       python3 Protocol/reference/ratchet.py --check    (the sealed packets of Protocol/vectors/)
"""
import hashlib
import json
import os
import struct
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

RAW = serialization.Encoding.Raw


def pub(private):
    return private.public_key().public_bytes(RAW, serialization.PublicFormat.Raw)


def priv_bytes(private):
    return private.private_bytes(RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption())


def dh(private, public_bytes):
    return private.exchange(X25519PublicKey.from_public_bytes(public_bytes))


def hkdf(ikm, salt, info, length):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def kdf_rk(rk, dh_out):
    out = hkdf(dh_out, rk, b"meshchat-ratchet-root", 64)
    return out[:32], out[32:]


def kdf_ck(ck):
    """§19.3 (version 6): the first ChaCha20 block under ck (RFC 8439, nonce 0, counter 0): next ck, message key."""
    # cryptography's ChaCha20 takes the 16 bytes counter (4, little-endian) ‖ nonce (12): all zero.
    block = Cipher(algorithms.ChaCha20(ck, b"\x00" * 16), mode=None).encryptor().update(b"\x00" * 64)
    return block[:32], block[32:]


MESSAGE_NONCE = b"\x00" * 12


def seal(mk, plaintext, ad):
    """§19.3: the message key is the ChaCha20-Poly1305 key of this one message; the nonce is all zero."""
    return ChaCha20Poly1305(mk).encrypt(MESSAGE_NONCE, plaintext, ad)


def header(dh_pub, pn, n):
    return dh_pub + struct.pack(">II", pn, n)


def key(label):
    """A fixed private key for the vectors: SHA-256 of a label."""
    return X25519PrivateKey.from_private_bytes(hashlib.sha256(label.encode()).digest())


class End:
    def __init__(self, name, keys, ad):
        self.name, self.keys, self.ad = name, list(keys), ad
        self.rk = self.cks = self.ckr = self.dhr = None
        self.ns = self.nr = self.pn = 0
        self.skipped = {}

    def next_key(self):
        return self.keys.pop(0)

    def encrypt(self, plaintext, extra=b""):
        self.cks, mk = kdf_ck(self.cks)
        h = header(pub(self.dhs), self.pn, self.ns)
        self.ns += 1
        return h + seal(mk, plaintext, self.ad + h + extra)

    def skip(self, until):
        while self.ckr is not None and self.nr < until:
            self.ckr, mk = kdf_ck(self.ckr)
            self.skipped[(self.dhr, self.nr)] = mk
            self.nr += 1

    def decrypt(self, message, extra=b""):
        h, body = message[:40], message[40:]
        dh_pub = h[:32]
        pn, n = struct.unpack(">II", h[32:40])
        if (dh_pub, n) in self.skipped:
            mk = self.skipped.pop((dh_pub, n))
        else:
            if dh_pub != self.dhr:
                self.skip(pn)
                self.pn, self.ns, self.nr, self.dhr = self.ns, 0, 0, dh_pub
                self.rk, self.ckr = kdf_rk(self.rk, dh(self.dhs, self.dhr))
                self.dhs = self.next_key()
                self.rk, self.cks = kdf_rk(self.rk, dh(self.dhs, self.dhr))
            self.skip(n)
            self.ckr, mk = kdf_ck(self.ckr)
            self.nr += 1
        return ChaCha20Poly1305(mk).decrypt(MESSAGE_NONCE, body, self.ad + h + extra)


def main():
    alice_static, bob_static = key("alice static"), key("bob static")
    bob_prekey, alice_ephemeral = key("bob prekey 7"), key("alice ephemeral")
    bob_identity = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"bob identity").digest())
    prekey_id = 7
    signed = b"meshchat-signed-prekey:" + struct.pack(">I", prekey_id) + pub(bob_prekey)
    signature = bob_identity.sign(signed)

    material = b"\xff" * 32 + dh(alice_static, pub(bob_prekey)) + dh(alice_ephemeral, pub(bob_static)) \
        + dh(alice_ephemeral, pub(bob_prekey))
    sk = hkdf(material, b"\x00" * 32, b"meshchat-x3dh", 32)
    ad = pub(alice_static) + pub(bob_static)

    alice_keys = [key(f"alice ratchet {i}") for i in range(4)]
    bob_keys = [key(f"bob ratchet {i}") for i in range(4)]
    alice = End("alice", alice_keys, ad)
    bob = End("bob", bob_keys, ad)
    # Initiator: a fresh ratchet key against the prekey; responder: the prekey is its first ratchet key.
    alice.dhs, alice.dhr = alice.next_key(), pub(bob_prekey)
    alice.rk, alice.cks = kdf_rk(sk, dh(alice.dhs, alice.dhr))
    bob.dhs, bob.rk = bob_prekey, sk

    script = [  # (sender, plaintext, delivered now?)
        ("alice", "hello bob", True), ("alice", "second line", True), ("bob", "hi alice", True),
        ("alice", "a new chain", True), ("bob", "one", False), ("bob", "two", True),
        ("bob", "three", True), ("deliver", 4, None), ("alice", "after the turn", True),
    ]
    steps, sent = [], []
    ends = {"alice": (alice, bob), "bob": (bob, alice)}
    for entry in script:
        if entry[0] == "deliver":
            index = entry[1]
            sender = steps[index]["sender"]
            receiver = ends[sender][1]
            assert receiver.decrypt(bytes.fromhex(steps[index]["message"])).decode() == steps[index]["plaintext"]
            steps.append({"deliver": index})
            continue
        sender, text, now = entry
        me, other = ends[sender]
        message = me.encrypt(text.encode())
        step = {"sender": sender, "plaintext": text, "message": message.hex()}
        if now:
            assert other.decrypt(message).decode() == text
        else:
            step["delayed"] = True
        steps.append(step)

    # One chain step (KDF_CK, §19.3) on its own, from a chain key that is SHA-256 of a label.
    chain_key = hashlib.sha256(b"chain key").digest()
    next_chain_key, message_key = kdf_ck(chain_key)

    print(json.dumps({
        "description": "PROTOCOL.md §19 (protocol version 6): a signed prekey, the X3DH agreement and a Double Ratchet conversation. "
                       "Private keys are SHA-256 of their labels; each end takes its ratchet keys in order. "
                       "Steps run in order; a delayed message is delivered by a later {\"deliver\": index} step.",
        "bob_identity_private": hashlib.sha256(b"bob identity").hexdigest(),
        "signed_prekey": {"id": prekey_id, "public": pub(bob_prekey).hex(), "signature": signature.hex()},
        "alice_static_private": priv_bytes(alice_static).hex(),
        "bob_static_private": priv_bytes(bob_static).hex(),
        "bob_prekey_private": priv_bytes(bob_prekey).hex(),
        "alice_ephemeral_private": priv_bytes(alice_ephemeral).hex(),
        "shared_secret": sk.hex(),
        "associated_data": ad.hex(),
        "alice_ratchet_private": [priv_bytes(k).hex() for k in alice_keys],
        "bob_ratchet_private": [priv_bytes(k).hex() for k in bob_keys],
        "steps": steps,
        "chain_step": {"chain_key": chain_key.hex(), "next_chain_key": next_chain_key.hex(),
                       "message_key": message_key.hex()},
    }, indent=2, ensure_ascii=False))


# §19.6: sealed packets. ------------------------------------------------------------------------

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors")
CONTEXT_LABEL = b"meshchat/3 sealed:"


def pattern(first):
    return bytes((first + i) & 0xFF for i in range(32))


def node_id(identity):
    """§2.2: the first 16 bytes of SHA-256 of the Ed25519 public key."""
    return hashlib.sha256(identity.public_key().public_bytes(RAW, serialization.PublicFormat.Raw)).digest()[:16]


def fields(message):
    """A protobuf message's fields as {number: [value]} (varints as ints, length-delimited as bytes)."""
    out, i = {}, 0

    def varint():
        nonlocal i
        value = shift = 0
        while True:
            byte = message[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while i < len(message):
        tag = varint()
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value = varint()
        elif wire == 2:
            length = varint()
            value, i = message[i:i + length], i + length
        else:
            raise ValueError(f"wire type {wire} is not used by Envelope or Routed")
        out.setdefault(number, []).append(value)
    return out


def routed(envelope_hex):
    """(origin, destination, packet id, sealed) of an Envelope { routed = 7 } (Routed: 1, 2, 3, 8)."""
    r = fields(fields(bytes.fromhex(envelope_hex))[7][0])
    return r[1][0], r.get(2, [b""])[0], r[3][0], r.get(8, [b""])[0]


class Pair:
    """alice and bob of the vectors: a session alice begins on bob's signed prekey (§19.2, §19.6)."""

    def __init__(self, keys):
        self.alice_static, self.bob_static = X25519PrivateKey.from_private_bytes(pattern(0x20)), \
            X25519PrivateKey.from_private_bytes(pattern(0x80))
        self.alice_id = node_id(Ed25519PrivateKey.from_private_bytes(pattern(0x00)))
        self.bob_id = node_id(Ed25519PrivateKey.from_private_bytes(pattern(0x60)))
        x = lambda name: X25519PrivateKey.from_private_bytes(bytes.fromhex(keys[name]))
        prekey, ephemeral = x("bobPrekeyPrivateKey"), x("aliceEphemeralPrivateKey")
        material = b"\xff" * 32 + dh(self.alice_static, pub(prekey)) + dh(ephemeral, pub(self.bob_static)) \
            + dh(ephemeral, pub(prekey))
        sk = hkdf(material, b"\x00" * 32, b"meshchat-x3dh", 32)
        ad = pub(self.alice_static) + pub(self.bob_static)
        later = [x(name) for name in ("aliceNextRatchetPrivateKey",) if name in keys]
        self.alice = End("alice", [x("aliceRatchetPrivateKey")] + later, ad)
        # bob's ratchet key after the last message he reads is not part of the vectors: any will do.
        self.bob = End("bob", [x(name) for name in ("bobRatchetPrivateKey",) if name in keys] + [X25519PrivateKey.generate()], ad)
        self.alice.dhs, self.alice.dhr = self.alice.next_key(), pub(prekey)
        self.alice.rk, self.alice.cks = kdf_rk(sk, dh(self.alice.dhs, self.alice.dhr))
        self.bob.dhs, self.bob.rk = prekey, sk
        # Until alice hears back, her messages are prekey messages.
        self.prekey_prefix = b"\x01" + struct.pack(">I", keys["bobPrekeyID"]) + pub(ephemeral) + pub(self.alice_static)
        self.session_prefix = b"\x02" + pub(ephemeral)[:8]
        self.alice_heard = False

    def seal(self, sender, origin, destination, packet_id, plaintext):
        context = CONTEXT_LABEL + origin + destination + packet_id
        prefix = self.session_prefix if sender == "bob" or self.alice_heard else self.prekey_prefix
        me, other = (self.alice, self.bob) if sender == "alice" else (self.bob, self.alice)
        packet = prefix + me.encrypt(plaintext, context + prefix)
        assert other.decrypt(packet[len(prefix):], context + prefix) == plaintext
        if sender == "bob":
            self.alice_heard = True
        return packet


def check_sealed():
    """Rebuilds every sealed packet in the vectors from its keys, header and plaintext."""
    def load(name):
        with open(os.path.join(VECTORS, name + ".json"), encoding="utf-8") as f:
            return json.load(f)

    mesh = load("mesh")
    failures, checked = [], 0

    def check(label, pair, case, body_hex):
        nonlocal checked
        origin, destination, packet_id, sealed = routed(case)
        sender = "alice" if origin == pair.alice_id else "bob"
        assert {origin, destination} == {pair.alice_id, pair.bob_id}, f"{label}: not between alice and bob"
        built = pair.seal(sender, origin, destination, packet_id, bytes.fromhex(body_hex))
        checked += 1
        if built != sealed:
            at = next((i for i, (a, b) in enumerate(zip(built, sealed)) if a != b), min(len(built), len(sealed)))
            failures.append(f"{label}: differs from byte {at} (reference {len(built)} bytes, vector {len(sealed)})\n"
                            f"  reference {built.hex()}\n  vector    {sealed.hex()}")

    pair = Pair(mesh)
    assert (pair.alice_id.hex(), pair.bob_id.hex()) == (mesh["aliceNodeID"], mesh["bobNodeID"])
    for case in mesh["cases"]:
        if case["name"].startswith("sealed"):
            check(f"mesh.json {case['name']}", pair, case["envelope"], case["body"])
    # Every other sealed case is the first message of a new session with mesh.json's keys.
    first = {k: v for k, v in mesh.items() if k in ("bobPrekeyID", "bobPrekeyPrivateKey",
                                                      "aliceEphemeralPrivateKey", "aliceRatchetPrivateKey")}
    for name, key in (("apps", "cases"), ("chat", "deliveries"), ("places", "deliveries")):
        for case in load(name)[key]:
            if routed(case["envelope"])[3]:
                check(f"{name}.json {case['name']}", Pair(first), case["envelope"], case["body"])
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"{checked - len(failures)} of {checked} sealed packets match", file=sys.stderr)
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        sys.exit(check_sealed())
    main()
