"""`Admission`: who may come in, and which way, decided in one place for every door.

Every request meets the same four questions, whether uvicorn's protocol serves it without an
ASGI cycle (the lean lane, `api/lean_lane.py`) or the ASGI stack does (`server.py`):
- its `Host` and `Origin`: one of each, a Host this hub answers to, and no browser Origin
  other than the hub's own (or one configured), so neither a DNS-rebinding page nor another
  site can drive the hub;
- its party: a credential the hub has seen (straight in), an MCP session that has not
  joined, or a stranger (`web/shield.py` serves strangers in turn);
- its body: declared within the limit;
- its route: a hot verb of the table (`wire/verbs`, `hot`), `/mcp`, or anything else.
The lean lane takes a request only where every answer is the one the ASGI stack would have
let straight through to the same handler (`lean`), so the two doors cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from caucus.errors import CaucusError, Forbidden, MalformedRequest, MisdirectedRequest
from caucus.wire.verb import Verb
from caucus.wire.verbs import hot_verb

Headers = list[tuple[bytes, bytes]]
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
MCP_PATH = "/mcp"

DUPLICATED = MalformedRequest(
    "the request has two Host (or two Origin) headers; send one (RFC 9112 asks a server to "
    "refuse it)"
)


class Party(Enum):
    KNOWN = "known"  # a credential the hub has seen: straight in
    SESSION = "session"  # an MCP session that has not joined: in turn, but not budgeted
    STRANGER = "stranger"


def split_host(value: str) -> tuple[str, str | None]:
    """'Host' or 'Origin' authority -> (lower-case host without brackets, port or None)."""
    value = value.strip().lower()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
        return host, port or None
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        return value, None
    return host, port


class Admission:
    """The one answer to who may come in and which way (see the module docstring).

    `party` tells a request's party from its headers without any I/O; `serving` says whether
    the hub serves yet (before it does, only the ASGI stack answers, with its 503)."""

    def __init__(
        self,
        *,
        allowed_hosts: list[str],
        allowed_origins: list[str],
        max_body_bytes: int,
        party: Callable[[Headers], Party] = lambda headers: Party.STRANGER,
        serving: Callable[[], bool] = lambda: True,
    ) -> None:
        self.hosts: set[tuple[str, str | None]] = {(h, None) for h in LOOPBACK_HOSTS}
        for entry in allowed_hosts:
            self.hosts.add(split_host(entry))
        self.origins = {o.strip().lower().rstrip("/") for o in allowed_origins}
        self.max_body = max_body_bytes
        self.party = party
        self.serving = serving
        self._host_verdicts: dict[bytes, bool] = {}  # Host headers seen: checked once each

    # --- Host and Origin ----------------------------------------------------------------------
    def refusal(self, headers: Headers) -> CaucusError | None:
        """Why a request with these headers is refused at the door, or None."""
        raw_host = origin = None
        for name, value in headers:
            if name == b"host":
                if raw_host is not None:
                    return DUPLICATED
                raw_host = value
            elif name == b"origin":
                if origin is not None:
                    return DUPLICATED
                origin = value
        return self.host_refusal(raw_host, origin)

    def host_refusal(self, raw_host: bytes | None, raw_origin: bytes | None) -> CaucusError | None:
        """Why a request with this one Host and Origin is refused, or None."""
        host = raw_host.decode("latin-1") if raw_host is not None else None
        verdict = self._host_verdicts.get(raw_host) if raw_host is not None else False
        if verdict is None and host is not None:
            verdict = self._host_ok(host)
            if len(self._host_verdicts) < 1024:  # bounded: Host is client-chosen
                self._host_verdicts[raw_host] = verdict  # type: ignore[index]
        if host is None or not verdict:
            return MisdirectedRequest(
                f"this hub does not answer to Host {host!r}; if it is behind a proxy, add "
                "the name to --allowed-hosts",
            )
        if raw_origin is not None:
            origin = raw_origin.decode("latin-1")
            if not self._origin_ok(origin, host):
                return Forbidden(
                    f"requests from the web origin {origin!r} are refused; a console served "
                    "elsewhere must be listed in --allowed-origins"
                )
        return None

    def _host_ok(self, host_header: str) -> bool:
        host, port = split_host(host_header)
        return (host, None) in self.hosts or (host, port) in self.hosts

    def _origin_ok(self, origin: str, host_header: str) -> bool:
        origin = origin.strip().lower().rstrip("/")
        if origin in self.origins:
            return True
        scheme, sep, authority = origin.partition("://")
        if not sep or scheme not in ("http", "https") or not authority:
            return False  # "null" (sandboxed frames, files) and anything odd
        return split_host(authority) == split_host(host_header)

    # --- the route ----------------------------------------------------------------------------
    @staticmethod
    def hot(method: str, path: str) -> Verb[Any] | None:
        """The hot verb a request is (the lanes answer it without FastAPI), or None."""
        found = hot_verb(method, path)
        return found[0] if found is not None else None

    @staticmethod
    def mcp(path: str) -> bool:
        return path.rstrip("/") == MCP_PATH

    # --- the lean lane ------------------------------------------------------------------------
    def lean(self, method: bytes, path: bytes, headers: Headers, mcp_takes: bool) -> bool:
        """Whether uvicorn's protocol may answer this request itself: a hot verb (or, when
        `mcp_takes`, an MCP tool call) from a known party, with one Host and one Origin the
        door accepts and a body declared within the limit, while the hub serves."""
        if b"%" in path:
            return False  # uvicorn decodes it for the routes: theirs to answer
        text = path.decode("latin-1")
        if method == b"POST" and path == MCP_PATH.encode():
            if not mcp_takes:
                return False
        elif method not in (b"GET", b"POST") or self.hot(method.decode(), text) is None:
            return False
        declared = 0
        for name, value in headers:
            if name == b"content-length":
                if not value.isdigit():
                    return False
                declared = int(value)
            elif name == b"transfer-encoding":
                return False
        if declared > self.max_body or self.refusal(headers) is not None:
            return False
        return self.serving() and self.party(headers) is Party.KNOWN
