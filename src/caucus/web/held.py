"""A response that gives back what its request held open once it is sent: for a stream,
once it ends or its client hangs up (`services.holds`)."""

from __future__ import annotations

from collections.abc import Callable

from starlette.responses import Response
from starlette.types import Receive, Scope, Send


class Held(Response):
    def __init__(self, response: Response, release: Callable[[], None]) -> None:
        # Not Response.__init__: the wrapped response renders its own body.
        self._response = response
        self._release = release
        self.status_code = response.status_code
        self.raw_headers = response.raw_headers
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._response(scope, receive, send)
        finally:
            self._release()
