"""Credentials come only from headers, never from the URL."""

from __future__ import annotations

from collections.abc import Iterable

from caucus.errors import Unauthorized


def parse_bearer(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header; None when absent.

    Raises Unauthorized for a header that is there but malformed, so a typo is not silently
    treated as no credentials at all."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Unauthorized("malformed Authorization header: send 'Bearer <token>'")
    return token


def bearer_from_scope(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """`parse_bearer` over raw ASGI headers (the hot lane's, without building a Request)."""
    for name, value in headers:
        if name == b"authorization":
            return parse_bearer(value.decode("latin-1"))
    return None
