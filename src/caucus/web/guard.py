"""Pure ASGI middleware (no BaseHTTPMiddleware: it would tax every request)."""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from caucus.web.admission import Admission
from caucus.web.errors import caucus_error_response

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


class Guard:
    """Every request, on every route (the hot lane and the event stream included), as the
    hub's `Admission` decides (`web/admission.py`):

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
        admission: Admission | None = None,
        *,
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        adds_own_headers: Callable[[str, str], bool] = lambda method, path: False,
    ) -> None:
        self.app = app
        # The hub's admission decides; a Guard on its own (a test's page) makes one.
        self.admission = admission or Admission(
            allowed_hosts=allowed_hosts or [],
            allowed_origins=allowed_origins or [],
            max_body_bytes=0,
        )
        # Whether (method, path)'s responses already carry SECURITY_HEADERS (the hot lane).
        self.adds_own_headers = adds_own_headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.admission.refusal(scope["headers"])
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
