"""The two hot routes (send, receive) and their companions (ack, peek).

Send and receive read the raw request and validate with pydantic-core directly: FastAPI's
per-parameter machinery costs more than the whole durable relay on these paths (ADR 0002).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.responses import Response

from caucus.api.auth import PeerDep, bearer_token, hub_of
from caucus.api.errors import describe_validation
from caucus.api.schemas import (
    AckRequest,
    AckResponse,
    ErrorBody,
    MessageOut,
    PeekResponse,
    ReceiveResponse,
    SendRequest,
    SendResponse,
)
from caucus.errors import InvalidRequest

router = APIRouter(tags=["messages"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    422: {"model": ErrorBody, "description": "malformed input"},
}


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        json.dumps(body, separators=(",", ":")),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def _body_schema(model: type[SendRequest]) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": model.model_json_schema()}},
        }
    }


@router.post(
    "/send",
    response_model=SendResponse,
    summary="Send a message to a peer, 'all', or a #channel",
    responses={
        **_ERRORS,
        404: {"model": ErrorBody, "description": "unknown recipient or reply_to"},
        413: {"model": ErrorBody, "description": "body or content too large"},
        429: {"model": ErrorBody, "description": "send budget spent; see Retry-After"},
    },
    openapi_extra=_body_schema(SendRequest),
)
async def send(request: Request) -> Response:
    hub = hub_of(request)
    peer = await hub.registry.authenticate(bearer_token(request))
    try:
        body = SendRequest.model_validate_json(await request.body())
    except ValidationError as exc:
        raise InvalidRequest(describe_validation(list(exc.errors()))) from None
    receipt = await hub.delivery.send(
        peer,
        to=body.to,
        content=body.content,
        thread=body.thread,
        reply_to=body.reply_to,
        meta=body.meta,
        idempotency_key=body.idempotency_key,
    )
    headers = {"Idempotent-Replayed": "true"} if receipt.duplicate else None
    return _json(SendResponse.dump(receipt), headers=headers)


def _int_param(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise InvalidRequest(f"{name}: must be an integer", field=name) from None


@router.get(
    "/receive",
    response_model=ReceiveResponse,
    summary="Long-poll for pending messages (and acknowledge the previous batch)",
    responses=_ERRORS,
    openapi_extra={
        "parameters": [
            {
                "name": "timeout",
                "in": "query",
                "schema": {"type": "number", "default": 25, "minimum": 0, "maximum": 25},
                "description": "seconds to wait for a message (server ceiling 25)",
            },
            {
                "name": "ack",
                "in": "query",
                "schema": {"type": "integer"},
                "description": "acknowledge the batch that held this seq, up to and including it",
            },
            {
                "name": "limit",
                "in": "query",
                "schema": {"type": "integer", "minimum": 1, "maximum": 100},
                "description": "at most this many messages (default 100)",
            },
        ]
    },
)
async def receive(request: Request) -> Response:
    hub = hub_of(request)
    peer = await hub.registry.authenticate(bearer_token(request))
    raw_timeout = request.query_params.get("timeout")
    try:
        timeout = float(raw_timeout) if raw_timeout not in (None, "") else 25.0
    except ValueError:
        raise InvalidRequest("timeout: must be a number of seconds", field="timeout") from None
    if timeout != timeout or timeout < 0:  # NaN or negative
        raise InvalidRequest("timeout: must be a number of seconds >= 0", field="timeout")
    result = await hub.delivery.receive(
        peer,
        wait=timeout,
        ack_through=_int_param(request, "ack"),
        limit=_int_param(request, "limit"),
    )
    return _json(
        {
            "messages": [MessageOut.from_delivery(d) for d in result.deliveries],
            "acked": result.acked,
            "superseded": result.superseded,
        }
    )


@router.post(
    "/ack",
    response_model=AckResponse,
    summary="Acknowledge delivered messages by seq, or a batch through a seq",
    responses=_ERRORS,
)
async def ack(body: AckRequest, request: Request, peer: PeerDep) -> Response:
    acked = await hub_of(request).delivery.ack(peer, seqs=body.seqs, through=body.through)
    return _json({"acked": acked})


@router.get(
    "/peek",
    response_model=PeekResponse,
    summary="How many messages wait, and a preview of the latest, without consuming any",
    responses=_ERRORS,
)
async def peek(request: Request, peer: PeerDep) -> Response:
    return _json(PeekResponse.dump(await hub_of(request).delivery.peek(peer)))
