"""The one reader of request bodies: every route, the hot lane included, parses JSON here.

What a client sends is refused here, with one code and one sentence wherever it is sent, when it
is not JSON the hub could store and read back: not UTF-8, not JSON, a duplicate key (which of
two values is meant?), NaN or Infinity, nesting past `MAX_DEPTH`, or a lone UTF-16 surrogate
(`"\\ud800"` decodes to a Python string that no UTF-8 writer can encode, so once stored it
would break every later read that includes it).
"""

from __future__ import annotations

import json
import math
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from caucus.errors import (
    CaucusError,
    InvalidRequest,
    MalformedBody,
    UnsupportedMediaType,
    invalid_input,
)
from caucus.web.errors import body_too_large, caucus_error_response

MAX_DEPTH = 32


M = TypeVar("M", bound=BaseModel)


def has_lone_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _refuse_constant(name: str) -> Any:
    raise MalformedBody(f"body: {name} is not a JSON number; send a finite number or null")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise MalformedBody(f"body: the number {text[:40]} is too large; send a finite number")
    return value


def _integer(text: str) -> int:
    if len(text) > 20:  # no integer the hub keeps is this long; int() of 64 KiB digits is slow
        raise InvalidRequest(
            f"body: the integer {text[:20]}... is past the 64-bit range the hub keeps",
            field="body",
        )
    return int(text)


def _check_text(where: str, value: Any) -> None:
    if isinstance(value, str):
        if has_lone_surrogate(value):
            raise InvalidRequest(
                f"{where}: holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not text;"
                " send valid Unicode",
                field=where,
            )
    elif isinstance(value, list):
        for item in value:
            if not isinstance(item, dict):  # objects were checked when they were built
                _check_text(where, item)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise MalformedBody(f"body: the key {key!r} appears twice; send each key once")
        if not key.isascii() and has_lone_surrogate(key):
            raise InvalidRequest(
                "body: a key holds a lone UTF-16 surrogate; send valid Unicode", field="body"
            )
        _check_text(key, value)
        obj[key] = value
    return obj


_decoder = json.JSONDecoder(
    object_pairs_hook=_pairs,
    parse_constant=_refuse_constant,
    parse_float=_finite,
    parse_int=_integer,
)


def _depth(raw: str) -> int:
    """How deeply `raw` nests, brackets inside strings aside."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or a `MalformedBody`/`InvalidRequest` that says what is wrong."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedBody(
            f"body: byte {exc.start} is not UTF-8; send JSON encoded as UTF-8"
        ) from None
    if not text.strip():
        raise MalformedBody("body: is empty; send a JSON object")
    # Counting brackets is cheap; the careful walk runs only when the count could be too deep.
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(text) > MAX_DEPTH:
        raise MalformedBody(f"body: nests deeper than {MAX_DEPTH} levels; send a flatter value")
    try:
        value = _decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise MalformedBody(
            f"body: is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise MalformedBody(f"body: nests deeper than {MAX_DEPTH} levels") from None
    _check_text("body", value)
    return value


def parse_model(model: type[M], raw: bytes) -> M:
    """A JSON body validated as `model` (the hot routes parse their own bodies); a body that
    does not fit is an InvalidRequest naming each field that is wrong, as FastAPI's are."""
    try:
        return model.model_validate(parse_json(raw))
    except ValidationError as exc:
        raise invalid_input(list(exc.errors())) from None


_JSON_TYPES = ("application/json",)


def check_content_type(headers: list[tuple[bytes, bytes]]) -> None:
    """A body is JSON: no content type, `application/json` or `application/<x>+json`."""
    for name, value in headers:
        if name == b"content-type":
            media = value.decode("latin-1").split(";", 1)[0].strip().lower()
            if media in _JSON_TYPES or (
                media.startswith("application/") and media.endswith("+json")
            ):
                return
            raise UnsupportedMediaType(
                f"content type {media or '(empty)'!r} is not JSON; send the body as JSON with"
                " 'Content-Type: application/json' (curl: --json)"
            )


async def read_body(receive: Receive, limit: int, headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole request body, refused with 413 past `limit` bytes however it is sent."""
    for name, value in headers:
        if name == b"content-length" and value.isdigit() and int(value) > limit:
            raise body_too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise MalformedBody("the client disconnected before sending its body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise body_too_large(limit)
        if not message.get("more_body", False):
            if not chunks:  # the usual case: the whole body in one piece
                return bytes(chunk)
            chunks.append(chunk)
            return b"".join(chunks)
        chunks.append(chunk)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: the disconnect, when it comes

    return replay


def _json_rpc(path: str) -> bool:
    """The A2A JSON-RPC endpoints: a body that is not JSON is theirs to answer, in JSON-RPC's
    terms (-32700, `api/a2a/screen.py`, with the same `parse_json`)."""
    return path == "/a2a" or (path.startswith("/a2a/") and path.count("/") == 2)


class JsonBodies:
    """Before FastAPI: reads every request body whole (413 past the limit, however it is sent),
    checks that a non-empty one is JSON the hub can keep (`parse_json`), then hands the same
    bytes on. FastAPI's own parsing then only ever sees well-formed JSON (the A2A JSON-RPC
    endpoints parse theirs themselves)."""

    METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in self.METHODS:
            await self.app(scope, receive, send)
            return
        try:
            body = await read_body(receive, self.max_bytes, scope["headers"])
            if body.strip():
                check_content_type(scope["headers"])
                if not _json_rpc(scope["path"]):
                    parse_json(body)
        except CaucusError as exc:
            await caucus_error_response(exc)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)
