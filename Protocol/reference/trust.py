#!/usr/bin/env python3
"""An independent implementation of meshchat's safety numbers and key rotation statements
(PROTOCOL.md §20), written from the specification with the `cryptography` package. It writes
Protocol/vectors/trust.json; the Swift tests reproduce it.

Usage: python3 Protocol/reference/trust.py > Protocol/vectors/trust.json
"""
import hashlib
import json
import struct

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def identity(label):
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(label.encode()).digest())


def public(key):
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def half(key_bytes):
    h = hashlib.sha512(b"\x00\x00" + key_bytes + b"meshchat-safety-number").digest()
    for _ in range(5200):
        h = hashlib.sha512(h + key_bytes).digest()
    return "".join("%05d" % (int.from_bytes(h[i * 5:i * 5 + 5], "big") % 100000) for i in range(6))


def safety_number(a, b):
    return "".join(sorted([half(a), half(b)]))


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def key_rotation_proto(old_key, new_key, issued, old_signature, new_signature):
    """meshchat.proto's KeyRotation, encoded by hand (protobuf wire format, fields in order)."""
    def field(number, data):
        return bytes([number << 3 | 2]) + varint(len(data)) + data
    return (field(1, old_key) + field(2, new_key) + bytes([3 << 3]) + varint(issued)
            + field(4, old_signature) + field(5, new_signature))


def main():
    alice, bob, bob2 = identity("alice identity"), identity("bob identity"), identity("bob identity 2")
    issued = 1_795_000_000_000
    signed = b"meshchat-key-rotation:" + public(bob) + public(bob2) + struct.pack(">Q", issued)
    print(json.dumps({
        "description": "PROTOCOL.md §20: safety numbers and a key rotation statement. Private keys are "
                       "SHA-256 of their labels (Ed25519 seeds).",
        "alice_identity_private": hashlib.sha256(b"alice identity").hexdigest(),
        "bob_identity_private": hashlib.sha256(b"bob identity").hexdigest(),
        "bob_new_identity_private": hashlib.sha256(b"bob identity 2").hexdigest(),
        "alice_half": half(public(alice)),
        "bob_half": half(public(bob)),
        "safety_number": safety_number(public(alice), public(bob)),
        "rotation": {
            "old_key": public(bob).hex(),
            "new_key": public(bob2).hex(),
            "issued_ms": issued,
            "signed_bytes": signed.hex(),
            "old_signature": bob.sign(signed).hex(),
            "new_signature": bob2.sign(signed).hex(),
            # How it travels since version 3 (LinkState.rotations, HandshakeIdentity.rotation):
            # meshchat.proto's KeyRotation, fields 1–5 in order.
            "proto": key_rotation_proto(public(bob), public(bob2), issued, bob.sign(signed), bob2.sign(signed)).hex(),
        },
    }, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
