"""Identifiers and secrets."""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_PREFIX = "cau_"  # noqa: S105 - a prefix that makes leaked tokens greppable


def new_token() -> str:
    """A bearer token with 256 bits of randomness."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    # Tokens are 256-bit random, so a fast unsalted hash is enough: there is nothing to brute-force.
    return hashlib.sha256(token.encode("utf-8")).digest()


def tokens_equal(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


def new_message_id() -> str:
    return "m_" + secrets.token_hex(8)
