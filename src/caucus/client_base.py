"""`BaseClient`: the HTTP plumbing the agent and operator clients share: one bearer token, one
error mapping (every error the hub reports raises its `caucus.errors` class)."""

from __future__ import annotations

import asyncio
import functools
import ssl
from types import TracebackType
from typing import Any, Self, TypeVar, cast

import httpx2
from pydantic import BaseModel

from caucus.defaults import DEFAULT_HUB
from caucus.errors import HubUnavailable, error_from_body
from caucus.wire.room import Health, Limits, VersionInfo
from caucus.wire.verb import Verb
from caucus.wire.verbs import VERBS, meta

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context every client of this process shares, verifying as httpx does by
    default: building one loads the whole CA bundle (about 20 ms of CPU), and a process may
    open many clients (a runtime's connectors, the console's probes, a test run's hundreds)."""
    return httpx2.create_ssl_context()


class BaseClient:
    """HTTP plumbing shared by the agent and operator clients: one bearer token, one error
    mapping (every hub error raises its `caucus.errors` class)."""

    def __init__(
        self,
        base_url: str = DEFAULT_HUB,
        *,
        token: str | None = None,
        timeout: float = 10.0,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._timeout = timeout
        self._http = httpx2.AsyncClient(
            base_url=self.base_url,
            timeout=httpx2.Timeout(timeout),
            transport=transport,
            headers={"User-Agent": "caucus-client"},
            verify=tls_context(),
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # --- plumbing --------------------------------------------------------------------------
    def _headers(self, auth: bool) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if auth and self.token else {}

    async def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        read_timeout: float | None = None,
        auth: bool = True,
        headers: dict[str, str] | None = None,
    ) -> httpx2.Response:
        sent = self._headers(auth)
        sent.update(headers or {})
        timeout = None
        if read_timeout is not None:
            timeout = httpx2.Timeout(self._timeout, read=read_timeout)
        try:
            response = await self._http.request(
                method,
                path,
                json=json,
                params={k: v for k, v in (params or {}).items() if v is not None},
                headers=sent,
                timeout=timeout if timeout is not None else httpx2.USE_CLIENT_DEFAULT,
            )
        except httpx2.TransportError as exc:
            raise HubUnavailable(
                f"cannot reach the hub at {self.base_url} ({type(exc).__name__}): start it "
                "with `caucus hub`, or point CAUCUS_HUB at one that runs"
            ) from exc
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = None
            raise error_from_body(response.status_code, body)
        return response

    async def _get(self, model: type[M], path: str, **kw: Any) -> M:
        return model.model_validate_json((await self._call("GET", path, **kw)).content)

    async def _post(self, model: type[M], path: str, body: Any = None, **kw: Any) -> M:
        response = await self._call("POST", path, json=body, **kw)
        return model.model_validate_json(response.content)

    async def verb(
        self, verb: Verb[R], /, *, read_timeout: float | None = None, **fields: Any
    ) -> R:
        """Call one verb of the table: its row makes the path, the query and the body of
        `fields` (a name its models lack is a `TypeError`), and parses the answer. A wait's
        `read_timeout` is how long the hub may hold it, on top of the client's timeout."""
        path, query, body = verb.split(fields)
        response = await self._call(
            verb.method,
            verb.url(**path),
            json=body,
            params=query,
            read_timeout=None if read_timeout is None else read_timeout + self._timeout,
            auth=not verb.public,
        )
        if verb.response is None:
            return cast(R, None)  # 204: nothing to read
        return verb.response.model_validate_json(response.content)

    async def call(self, name: str, /, **fields: Any) -> BaseModel:
        """Any verb of the hub's table by name (`caucus.wire.verbs`), with its path
        parameters, query and body fields by name: `await hub.call("depend", task_id=t,
        blocked_by=[u])`. The answer is the verb's wire model."""
        verb = VERBS.get(name)
        if verb is None:
            raise ValueError(f"no verb {name!r}; the hub's verbs are: {', '.join(VERBS)}")
        answer: BaseModel = await self.verb(verb, **fields)
        return answer

    async def health(self) -> Health:
        return await self.verb(meta.HEALTH)

    async def version(self) -> VersionInfo:
        """Which hub this is (no token needed)."""
        return await self.verb(meta.VERSION)

    async def limits(self) -> Limits:
        """The limits this hub applies (content, long-poll, caps, the send budget)."""
        return await self.verb(meta.LIMITS)

    async def wait_ready(self, timeout: float = 15.0) -> None:
        """Poll /health until the hub answers (used after starting a hub process)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                await self.health()
                return
            except HubUnavailable:
                if loop.time() > deadline:
                    raise
                await asyncio.sleep(0.05)
