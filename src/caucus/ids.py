"""Identifiers and secrets."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import secrets

TOKEN_PREFIX = "cau_"  # noqa: S105 - a prefix that makes leaked tokens greppable


def new_token(prefix: str = TOKEN_PREFIX) -> str:
    """A bearer token with 256 bits of randomness."""
    return prefix + secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    # Tokens are 256-bit random, so a fast unsalted hash is enough: there is nothing to brute-force.
    return hashlib.sha256(token.encode("utf-8")).digest()


def tokens_equal(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


class MessageIds:
    """Unique message ids: a random per-process prefix and a counter.

    Cheaper than fresh randomness per message on the send path, and unique across restarts
    because each process draws its own 48-bit prefix. The counter is zero-padded so that a
    process's ids sort in the order they were made: the unique index on ids (messages, and
    the tasks, offers and forms that borrow these ids) then takes each new one at its right
    edge, one page a batch, where unpadded hex ("…f" after "…10") scattered them across the
    index and every commit rewrote pages all over it (relay.py's closed loop: ~8% less hub
    CPU per message padded, ~10% more messages a second).
    """

    def __init__(self) -> None:
        self._prefix = "m_" + secrets.token_hex(6)
        self._next = itertools.count(1)

    def next(self) -> str:
        return f"{self._prefix}{next(self._next):010x}"
