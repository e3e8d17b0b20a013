"""The hot message routes, send and receive, and the lane that serves every hot route (these,
and a task's round trip from `hot_tasks.py`) without FastAPI.

Each hot route is one function from (hub, token, raw input) to a JSON body. The FastAPI routes in
`routes/messages.py` call these functions (and document them in /openapi.json); `FastLane`, an ASGI
front placed before the FastAPI app, calls the very same functions directly, skipping FastAPI's
routing, dependency solving and middleware stack, which cost more per request than the durable
relay itself (ADR 0002, 0015). Error mapping is the shared one in `web/errors.py`; the bodies
are the wire models of `wire/messages.py`, serialized straight to JSON bytes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from caucus.api import hot_tasks  # noqa: F401  (binds the task verbs' glue)
from caucus.errors import CaucusError, InvalidRequest
from caucus.services.hub import Hub
from caucus.web.admission import Admission
from caucus.web.bearer import bearer_from_scope
from caucus.web.body import check_content_type, parse_model, read_body
from caucus.web.context import served
from caucus.web.errors import (
    caucus_error_response,
    unexpected_error_body,
)
from caucus.web.verbs import answer_raw
from caucus.wire.fields import MAX_INT
from caucus.wire.messages import Batch, InboundMessage, SendResult
from caucus.wire.requests import SendRequest
from caucus.wire.verbs import hot_verb, messages

log = logging.getLogger(__name__)

_Handler = Callable[[Scope, Receive, Send], Awaitable[None]]

REPLAYED_HEADER = "Idempotent-Replayed"


# json.dumps() builds a new encoder per call when given options; one configured encoder is reused.
_encode = json.JSONEncoder(separators=(",", ":")).encode


def dumps(body: object) -> bytes:
    return _encode(body).encode()


async def send_message(hub: Hub, token: str | None, raw: bytes) -> tuple[bytes, bool]:
    """POST /send. Returns the JSON body and whether it replays an idempotent earlier send."""
    peer = await hub.principals.agent(token)
    body = parse_model(SendRequest, raw)
    receipt = await hub.delivery.send(
        peer,
        to=body.to,
        content=body.content,
        thread=body.thread,
        reply_to=body.reply_to,
        meta=body.meta,
        idempotency_key=body.idempotency_key,
    )
    result = SendResult.of(receipt)
    return SendResult.__pydantic_serializer__.to_json(result), receipt.duplicate


def _int_param(query: Mapping[str, str], name: str) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw) if len(raw) <= 20 else None
    except ValueError:
        value = None
    if value is None or not 0 <= value <= MAX_INT:
        raise InvalidRequest(
            f"{name}: must be a whole number from 0 to {MAX_INT}", field=name
        ) from None
    return value


async def receive_messages(
    hub: Hub,
    token: str | None,
    query: Mapping[str, str],
    on_park: Callable[[], object] | None = None,
) -> bytes:
    """GET /receive?timeout=&ack=&limit=."""
    peer = await hub.principals.agent(token)
    raw_timeout = query.get("timeout")
    try:
        timeout = float(raw_timeout) if raw_timeout not in (None, "") else 25.0
    except ValueError:
        raise InvalidRequest("timeout: must be a number of seconds", field="timeout") from None
    if not math.isfinite(timeout) or timeout < 0:
        raise InvalidRequest("timeout: must be a number of seconds >= 0", field="timeout")
    result = await hub.delivery.receive(
        peer,
        wait=timeout,
        ack_through=_int_param(query, "ack"),
        limit=_int_param(query, "limit"),
        on_park=on_park,
    )
    batch = Batch.model_construct(
        messages=[InboundMessage.of(d) for d in result.deliveries],
        acked=result.acked,
        superseded=result.superseded,
        displaced_watcher=result.displaced_watcher,
    )
    return Batch.__pydantic_serializer__.to_json(batch)


_REPLAYED = (REPLAYED_HEADER.lower().encode(), b"true")


async def answer_hot(
    hub: Hub,
    method: str,
    path: str,
    query: bytes,
    headers: list[tuple[bytes, bytes]],
    body: bytes,
    on_park: Callable[[], object] | None = None,
) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """A hot route's answer, once its body is read: the JSON body and the route's own headers
    (the replay mark). Both lanes call it (this module's `FastLane`, `lean_lane.py`); it
    raises `CaucusError` as the documented routes do."""
    token = bearer_from_scope(headers)
    found = hot_verb(method, path)
    assert found is not None  # only a hot route comes here
    verb, params = found
    if verb.request is not None:
        check_content_type(headers)
    if verb is messages.RECEIVE:
        return await receive_messages(hub, token, parse_query(query), on_park), []
    if verb is messages.SEND:
        sent, replayed = await send_message(hub, token, body)
        return sent, [_REPLAYED] if replayed else []
    return await answer_raw(hub, token, verb, params, body), []  # a task's verbs


def parse_query(raw: bytes) -> dict[str, str]:
    """The few plain parameters the hot routes take; percent-decoding only when present."""
    text = raw.decode("latin-1")
    if "%" in text or "+" in text:
        return dict(parse_qsl(text))
    query: dict[str, str] = {}
    for part in text.split("&"):
        if part:
            key, _, value = part.partition("=")
            query[key] = value  # the last one wins, as with parse_qsl
    return query


_JSON = (b"content-type", b"application/json")


async def _respond(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    headers = [_JSON, (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class FastLane:
    """ASGI front: the hot routes straight to their handlers; the rest to `app`.

    Hot: POST /send, GET /receive, POST /tasks and POST /tasks/{id}/{reply|fail|input|cancel}
    (`hot_tasks.py`)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.headers = headers or []

    @staticmethod
    def serves(method: str, path: str) -> bool:
        """Whether the lane answers this route (its responses carry their own headers)."""
        return Admission.hot(method, path) is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            verb = Admission.hot(scope["method"], scope["path"])
            if verb is not None:
                handler = self._receive if verb is messages.RECEIVE else self._post
                await self._guarded(handler, scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _guarded(self, handler: _Handler, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await handler(scope, receive, send)
        except CaucusError as exc:
            await caucus_error_response(exc, self.headers)(scope, receive, send)
        except Exception:
            log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            await _respond(send, 500, dumps(unexpected_error_body()), self.headers)

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = await read_body(receive, self.max_body_bytes, scope["headers"])
        hub = served(scope).hub
        body, own = await answer_hot(hub, "POST", scope["path"], b"", scope["headers"], raw)
        await _respond(send, 200, body, self.headers + own)

    async def _receive(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw_query = scope["query_string"]
        # A client that hangs up ends its long-poll, so nothing is claimed for a reader that is
        # gone. The watcher cancels this request's task; that cancellation is ours to absorb.
        this = asyncio.current_task()
        assert this is not None
        hung_up = False

        async def watch() -> None:
            nonlocal hung_up
            await _wait_disconnect(receive)
            hung_up = True
            this.cancel()

        watcher: asyncio.Future[None] | None = None

        def start_watching() -> None:
            nonlocal watcher
            watcher = asyncio.ensure_future(watch())

        try:
            body, _ = await answer_hot(
                served(scope).hub,
                "GET",
                "/receive",
                raw_query,
                scope["headers"],
                b"",
                start_watching,
            )
        except asyncio.CancelledError:
            if hung_up:
                this.uncancel()
                return
            raise
        finally:
            if watcher is not None:
                watcher.cancel()
        await _respond(send, 200, body, self.headers)


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
