"""Operator forms and the decisions they become, over HTTP."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.domain.forms import FormState
from caucus.errors import InvalidRequest
from caucus.services.roles import Access
from caucus.web.access import OperatorDep, PeerDep, RoomDep, ViewerDep, access
from caucus.web.context import hub_of
from caucus.web.openapi import without
from caucus.wire.errors import ErrorBody
from caucus.wire.forms import DecisionList, FormInfo, FormList, LedgerStatusInfo
from caucus.wire.requests import AnswerRequest, AskRequest, ReasonRequest

router = APIRouter(tags=["forms"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    403: {"model": ErrorBody, "description": "not a member of the channel, or not the operator"},
    404: {"model": ErrorBody, "description": "no such form"},
    409: {"model": ErrorBody, "description": "the form was already answered or canceled"},
    422: {"model": ErrorBody, "description": "a field or answer that does not fit the form"},
    429: {"model": ErrorBody, "description": "cap_open_forms: too many of your forms pending"},
}
Limit = Annotated[int, Query(ge=1, le=200, description="how many, newest first (1-200)")]


@router.post(
    "/forms",
    summary="Ask the operator a bounded question; the answer goes to `to` and to you",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=access(Access.AGENT),
)
async def ask(body: AskRequest, request: Request, peer: PeerDep) -> FormInfo:
    fields = [f.model_dump(exclude_none=True) for f in body.fields]
    call = body.call.model_dump() if body.call is not None else None
    return FormInfo.of(await hub_of(request).forms.ask(peer, body.title, fields, body.to, call))


@router.get(
    "/forms",
    summary="Pending forms of your audiences (look before you ask); before joining, those "
    "asked of everyone",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=access(Access.ROOM),
)
async def list_forms(request: Request, who: RoomDep) -> FormList:
    return FormList.of(await hub_of(request).forms.visible(who.peer))


@router.post(
    "/forms/{form_id}/cancel",
    summary="Take back a pending form of yours (an approval you stopped waiting for): canceled, "
    "with the reason, on the ledger; a later answer is 409 form_closed",
    responses={**_ERRORS, 404: {"model": ErrorBody, "description": "no such form of yours"}},
    openapi_extra=access(Access.AGENT),
)
async def withdraw(
    form_id: str, request: Request, peer: PeerDep, body: ReasonRequest | None = None
) -> FormInfo:
    reason = body.reason if body else None
    return FormInfo.of(await hub_of(request).forms.withdraw(peer, form_id, reason))


@router.get(
    "/decisions",
    summary="What was decided, newest first: broadcast decisions and your channels' (before "
    "joining, the broadcast ones)",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=access(Access.ROOM),
)
async def decisions(request: Request, who: RoomDep, limit: Limit = 20) -> DecisionList:
    return DecisionList.of(await hub_of(request).decisions.visible(who.peer, limit))


@router.get(
    "/operator/forms",
    summary="Forms by state: pending (the default, oldest first), answered, canceled or all",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=access(Access.VIEWER),
)
async def operator_forms(
    request: Request,
    _: ViewerDep,
    state: Annotated[str, Query(description="pending | answered | canceled | all")] = "pending",
) -> FormList:
    return FormList.of(await hub_of(request).forms.listing(_state(state)))


@router.get(
    "/operator/forms/{form_id}",
    summary="One form, in any state",
    responses=without(_ERRORS, 409),
    openapi_extra=access(Access.VIEWER),
)
async def operator_form(form_id: str, request: Request, _: ViewerDep) -> FormInfo:
    return FormInfo.of(await hub_of(request).forms.get(form_id))


@router.post(
    "/operator/forms/{form_id}/answer",
    summary="Answer a pending form: delivered to its audience and asker, and recorded",
    responses=_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def answer(form_id: str, body: AnswerRequest, request: Request, _: OperatorDep) -> FormInfo:
    return FormInfo.of(await hub_of(request).forms.answer(form_id, body.answers))


@router.post(
    "/operator/forms/{form_id}/cancel",
    summary="Cancel a pending form; the asker is told (with the reason, if given)",
    responses=_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def cancel(
    form_id: str, request: Request, _: OperatorDep, body: ReasonRequest | None = None
) -> FormInfo:
    return FormInfo.of(await hub_of(request).forms.cancel(form_id, body.reason if body else None))


@router.get(
    "/operator/decisions",
    summary="Every decision on the ledger, newest first",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=access(Access.VIEWER),
)
async def operator_decisions(request: Request, _: ViewerDep, limit: Limit = 20) -> DecisionList:
    return DecisionList.of(await hub_of(request).decisions.recent(limit, None))


@router.get(
    "/operator/ledger",
    summary="Whether the decision ledger verifies now",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=access(Access.VIEWER),
)
async def ledger(request: Request, _: ViewerDep) -> LedgerStatusInfo:
    return LedgerStatusInfo.of(await hub_of(request).decisions.status())


def _state(state: str) -> FormState | None:
    if state == "all":
        return None
    try:
        return FormState(state)
    except ValueError:
        raise InvalidRequest("state is pending, answered, canceled or all", field="state") from None
