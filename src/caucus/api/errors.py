"""The one mapping from the error tree to HTTP responses."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from caucus.errors import CaucusError, PayloadTooLarge, RateLimited

log = logging.getLogger(__name__)

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


def error_response(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Response:
    return Response(
        json.dumps(body), status_code=status, media_type="application/json", headers=headers
    )


def caucus_error_response(
    exc: CaucusError, extra_headers: list[tuple[bytes, bytes]] | None = None
) -> Response:
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in extra_headers or ()}
    if isinstance(exc, RateLimited):
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    return error_response(exc.status, exc.to_dict(), headers or None)


def unexpected_error_body() -> dict[str, str]:
    return {"error": "internal_error", "detail": "the hub hit an unexpected error; see its log"}


def body_too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"request body is over the {limit // 1024} KiB limit; send less", limit=limit
    )


def describe_validation(errors: list[Any]) -> str:
    parts = []
    for err in errors[:5]:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query")]
        where = ".".join(loc) or "body"
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown field"
            if where == "sender":
                msg = "unknown field: the sender comes from your token"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI) -> None:
    async def on_caucus(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, CaucusError)
        return caucus_error_response(exc)

    async def on_validation(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return error_response(
            422, {"error": "invalid_request", "detail": describe_validation(list(exc.errors()))}
        )

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
