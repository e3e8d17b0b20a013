"""Signed checkpoints: an Ed25519 signature over a ledger head, kept in `<log>.signed`.

A hash chain proves order, not authorship: whoever can write the ledger can rewrite all of it,
recompute every hash and the head checkpoint, and `verify` would pass. A checkpoint signed with
a key kept away from the hub's files cannot be forged that way, so `verify --key` catches a
whole-chain rewrite back to the last signed head.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from caucus.errors import InvalidRequest
from caucus.files import create_private, open_private, private_dir
from caucus.ledger.verify import Break


def signed_path(path: Path) -> Path:
    return path.with_name(path.name + ".signed")


def _message(count: int, head_hash: str) -> bytes:
    return json.dumps({"count": count, "head_hash": head_hash}, sort_keys=True).encode("ascii")


def load_or_create_key(key_file: Path, ledger: Path) -> tuple[Ed25519PrivateKey, bool]:
    """The signing key at `key_file`, created (0600, with a `.pub` beside it) when missing."""
    key_dir = key_file.expanduser().resolve().parent
    if key_dir == ledger.expanduser().resolve().parent:
        raise InvalidRequest(
            f"the signing key {key_file} is in the ledger's own directory; keep it elsewhere "
            "(for example ~/.config/caucus/ledger.key) so whoever can rewrite the ledger "
            "cannot also sign it",
            field="ledger_key",
        )
    if key_file.exists():
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise InvalidRequest(f"{key_file} is not an Ed25519 private key", field="ledger_key")
        return key, False
    key = Ed25519PrivateKey.generate()
    private_dir(key_file.parent)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    create_private(key_file, pem)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    key_file.with_name(key_file.name + ".pub").write_bytes(public)
    return key, True


def load_public_key(key_file: Path) -> Ed25519PublicKey:
    """A public key, or the public half of a private key file."""
    data = key_file.read_bytes()
    try:
        public = serialization.load_pem_public_key(data)
    except ValueError:
        private = serialization.load_pem_private_key(data, password=None)
        if not isinstance(private, Ed25519PrivateKey):
            raise InvalidRequest(f"{key_file} is not an Ed25519 key", field="ledger_key") from None
        return private.public_key()
    if not isinstance(public, Ed25519PublicKey):
        raise InvalidRequest(f"{key_file} is not an Ed25519 key", field="ledger_key")
    return public


def sign(path: Path, key: Ed25519PrivateKey, count: int, head_hash: str) -> dict[str, Any]:
    signature = base64.b64encode(key.sign(_message(count, head_hash))).decode("ascii")
    entry = {
        "signed_at": datetime.now(UTC).isoformat(),
        "count": count,
        "head_hash": head_hash,
        "signature": signature,
    }
    with open_private(signed_path(path), "a") as handle:
        handle.write(json.dumps(entry, separators=(",", ":")) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return entry


@dataclass(frozen=True)
class SignedCheck:
    checked: int
    broken: Break | None


def check_signed(path: Path, public: Ed25519PublicKey, hashes: list[str]) -> SignedCheck:
    """Every signed checkpoint must carry a valid signature and match the chain's prefix."""
    try:
        lines = signed_path(path).read_text(encoding="ascii").splitlines()
    except (FileNotFoundError, UnicodeDecodeError):
        lines = []
    entries = [line for line in lines if line.strip()]
    if not entries:
        return SignedCheck(0, Break(len(hashes), "no signed checkpoint"))
    for text in entries:
        try:
            entry = json.loads(text)
            count, head = int(entry["count"]), str(entry["head_hash"])
            public.verify(base64.b64decode(entry["signature"]), _message(count, head))
        except (ValueError, KeyError, TypeError, InvalidSignature):
            return SignedCheck(0, Break(len(hashes), "invalid checkpoint signature"))
        if count == 0:
            continue
        if count > len(hashes):
            return SignedCheck(0, Break(len(hashes), "signed record missing (possible truncation)"))
        if hashes[count - 1] != head:
            return SignedCheck(0, Break(count - 1, "signed checkpoint mismatch (chain rewritten)"))
    return SignedCheck(len(entries), None)
