"""The one mapping from the error tree to HTTP responses.

The body is `{"error": <code>, "detail": <sentence>, "next": <hint code>, "hint": <what to do
over HTTP>, ...extra}`: `detail` is transport-neutral, `next` names the next step for any
client, and `hint` says it as a route.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from caucus.errors import (
    CaucusError,
    Hint,
    MalformedBody,
    PayloadTooLarge,
    RateLimited,
    invalid_input,
)

log = logging.getLogger(__name__)

HTTP_HINTS: dict[Hint, str] = {
    Hint.REGISTER: "POST /register for a token",
    Hint.RESUME: "POST /register with that peer's token (as 'token' or Bearer) resumes it",
    Hint.AGENT_KEY: "send the hub's agent key in the X-Caucus-Agent-Key header",
    Hint.LIST_PEERS: "GET /peers lists who is here",
    Hint.LIST_CHANNELS: "GET /channels lists the channels and their members",
    Hint.JOIN_CHANNEL: "POST /channels/join joins (and creates) it",
    Hint.RAISE_HAND: "POST /floor with action 'raise' queues you for it",
    Hint.LIST_TASKS: "GET /tasks lists yours",
    Hint.LIST_OFFERS: "GET /offers lists the board",
    Hint.LIST_FORMS: "GET /forms lists the pending ones",
    Hint.PROTOCOL: "GET /protocol lists the sections",
    Hint.RETRY_LATER: "wait Retry-After seconds, then retry",
}

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def error_body(exc: CaucusError) -> dict[str, Any]:
    body = exc.to_dict()
    if exc.hint is not None:
        body["hint"] = HTTP_HINTS[exc.hint]
    return body


def error_response(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Response:
    return Response(
        json.dumps(body), status_code=status, media_type="application/json", headers=headers
    )


def error_parts(exc: CaucusError) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    """The status, JSON body and own headers (Retry-After) of the answer to `exc`, as every
    lane writes it."""
    headers = []
    retry = exc.retry_after if isinstance(exc, RateLimited) else exc.extra.get("retry_after")
    if isinstance(retry, int | float):
        headers.append((b"retry-after", str(max(1, math.ceil(retry))).encode()))
    return exc.status, json.dumps(error_body(exc)).encode(), headers


def caucus_error_response(
    exc: CaucusError, extra_headers: list[tuple[bytes, bytes]] | None = None
) -> Response:
    status, body, own = error_parts(exc)
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in [*(extra_headers or ()), *own]}
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def unexpected_error_body() -> dict[str, str]:
    return {"error": "internal_error", "detail": "the hub hit an unexpected error; see its log"}


def body_too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"request body is over the {limit // 1024} KiB limit; send less", limit=limit
    )


def install_error_handlers(app: FastAPI) -> None:
    async def on_caucus(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, CaucusError)
        return caucus_error_response(exc)

    async def on_validation(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = list(exc.errors())
        if any(tuple(e.get("loc", ())) == ("body",) and e.get("type") == "missing" for e in errors):
            # No body where one is needed: the same code and sentence as on the hot routes,
            # which read their own bodies (`JsonBodies` answers every other malformed one).
            return caucus_error_response(MalformedBody("body: is empty; send a JSON object"))
        return caucus_error_response(invalid_input(errors))

    async def on_http(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        detail = exc.detail if isinstance(exc.detail, str) else code
        if exc.status_code == 404:
            detail = "no such route; GET /openapi.json lists the API"
        headers = dict(exc.headers) if exc.headers else None
        return error_response(exc.status_code, {"error": code, "detail": detail}, headers)

    async def on_unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, unexpected_error_body())

    app.add_exception_handler(CaucusError, on_caucus)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_unexpected)
