"""Pure ASGI middleware (no BaseHTTPMiddleware: it would tax every request)."""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from caucus.errors import CaucusError, Forbidden, MalformedRequest, MisdirectedRequest
from caucus.web.errors import caucus_error_response

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
HTML_CSP = (
    b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    b"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    b"frame-ancestors 'none'"
)


DUPLICATED = MalformedRequest(
    "the request has two Host (or two Origin) headers; send one (RFC 9112 asks a server to "
    "refuse it)"
)


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


class Guard:
    """Every request, on every route (the hot lane and the event stream included):

    - a `Host` this hub does not answer to is refused with 421, so a DNS-rebinding page cannot
      reach it through a name that resolves to 127.0.0.1;
    - a browser `Origin` other than the hub's own (or one configured) is refused with 403, so
      no web page can drive the hub from the operator's browser;
    - a request with two `Host` (or two `Origin`) headers is refused with 400: which one the
      checks read and which one a URL is built from must never differ;
    - every response carries nosniff and DENY framing, and HTML a strict CSP.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: list[str],
        allowed_origins: list[str],
        adds_own_headers: Callable[[str, str], bool] = lambda method, path: False,
    ) -> None:
        self.app = app
        self.hosts: set[tuple[str, str | None]] = {(h, None) for h in LOOPBACK_HOSTS}
        for entry in allowed_hosts:
            self.hosts.add(split_host(entry))
        self.origins = {o.strip().lower().rstrip("/") for o in allowed_origins}
        # Whether (method, path)'s responses already carry SECURITY_HEADERS (the hot lane).
        self.adds_own_headers = adds_own_headers
        self._host_verdicts: dict[bytes, bool] = {}  # Host headers seen: checked once each

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

    def refusal(self, raw_host: bytes | None, raw_origin: bytes | None) -> CaucusError | None:
        """Why a request with these Host and Origin headers is refused, or None."""
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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        raw_host = origin = None
        twice = False
        for name, value in scope["headers"]:
            if name == b"host":
                twice = twice or raw_host is not None
                raw_host = value
            elif name == b"origin":
                twice = twice or origin is not None
                origin = value
        refused = DUPLICATED if twice else self.refusal(raw_host, origin)
        if refused is not None:
            await caucus_error_response(refused, SECURITY_HEADERS)(scope, receive, send)
            return

        if self.adds_own_headers(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.extend(SECURITY_HEADERS)
                html = any(k == b"content-type" and v.startswith(b"text/html") for k, v in headers)
                if html and not any(k == b"content-security-policy" for k, _ in headers):
                    headers.append((b"content-security-policy", HTML_CSP))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
