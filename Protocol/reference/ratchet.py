#!/usr/bin/env python3
"""An independent implementation of meshchat's end-to-end session keys (signed prekey, X3DH
without one-time prekeys, Double Ratchet), written from the specification alone with the
`cryptography` package. It writes Protocol/vectors/ratchet.json; the Swift tests reproduce it.

Usage: python3 Protocol/reference/ratchet.py > Protocol/vectors/ratchet.json
"""
import hashlib
import hmac
import json
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
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
    return hmac.new(ck, b"\x02", hashlib.sha256).digest(), hmac.new(ck, b"\x01", hashlib.sha256).digest()


def seal(mk, plaintext, ad):
    out = hkdf(mk, b"\x00" * 32, b"meshchat-ratchet-message", 44)
    return ChaCha20Poly1305(out[:32]).encrypt(out[32:], plaintext, ad)


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

    def encrypt(self, plaintext):
        self.cks, mk = kdf_ck(self.cks)
        h = header(pub(self.dhs), self.pn, self.ns)
        self.ns += 1
        return h + seal(mk, plaintext, self.ad + h)

    def skip(self, until):
        while self.ckr is not None and self.nr < until:
            self.ckr, mk = kdf_ck(self.ckr)
            self.skipped[(self.dhr, self.nr)] = mk
            self.nr += 1

    def decrypt(self, message):
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
        out = hkdf(mk, b"\x00" * 32, b"meshchat-ratchet-message", 44)
        return ChaCha20Poly1305(out[:32]).decrypt(out[32:], body, self.ad + h)


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

    print(json.dumps({
        "description": "PROTOCOL.md §19: a signed prekey, the X3DH agreement and a Double Ratchet conversation. "
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
    }, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
