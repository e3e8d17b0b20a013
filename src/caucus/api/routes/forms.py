"""Operator forms and the decisions they become, over HTTP."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.api.verbs import Call, serve
from caucus.domain.control import Access
from caucus.domain.forms import FormState
from caucus.domain.peers import Peer
from caucus.errors import InvalidRequest
from caucus.services.principals import Principal
from caucus.web.access import OperatorDep, ViewerDep, access
from caucus.web.context import hub_of
from caucus.web.openapi import without
from caucus.wire.errors import ErrorBody
from caucus.wire.forms import DecisionList, FormInfo, FormList, LedgerStatusInfo
from caucus.wire.queries import DecisionsQuery
from caucus.wire.requests import AnswerRequest, AskRequest, ReasonRequest
from caucus.wire.verbs import VERBS

router = APIRouter()
operator_router = APIRouter(tags=["forms"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    403: {"model": ErrorBody, "description": "not a member of the channel, or not the operator"},
    404: {"model": ErrorBody, "description": "no such form"},
    409: {"model": ErrorBody, "description": "the form was already answered or canceled"},
    422: {"model": ErrorBody, "description": "a field or answer that does not fit the form"},
    429: {"model": ErrorBody, "description": "cap_open_forms: too many of your forms pending"},
}
Limit = Annotated[int, Query(ge=1, le=200, description="how many, newest first (1-200)")]


async def _ask(c: Call[Peer, AskRequest]) -> FormInfo:
    fields = [f.model_dump(exclude_none=True) for f in c.rq.fields]
    call = c.rq.call.model_dump() if c.rq.call is not None else None
    return FormInfo.of(await c.hub.forms.ask(c.who, c.rq.title, fields, c.rq.to, call))


async def _forms(c: Call[Principal, None]) -> FormList:
    return FormList.of(await c.hub.forms.visible(c.who.peer))


async def _withdraw(c: Call[Peer, ReasonRequest | None]) -> FormInfo:
    reason = c.rq.reason if c.rq else None
    return FormInfo.of(await c.hub.forms.withdraw(c.who, c.path["form_id"], reason))


async def _decisions(c: Call[Principal, DecisionsQuery]) -> DecisionList:
    return DecisionList.of(await c.hub.decisions.visible(c.who.peer, c.rq.limit))


serve(router, VERBS["ask_operator"], _ask)
serve(router, VERBS["forms"], _forms)
serve(router, VERBS["withdraw_form"], _withdraw)
serve(router, VERBS["decisions"], _decisions)


@operator_router.get(
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


@operator_router.get(
    "/operator/forms/{form_id}",
    summary="One form, in any state",
    responses=without(_ERRORS, 409),
    openapi_extra=access(Access.VIEWER),
)
async def operator_form(form_id: str, request: Request, _: ViewerDep) -> FormInfo:
    return FormInfo.of(await hub_of(request).forms.get(form_id))


@operator_router.post(
    "/operator/forms/{form_id}/answer",
    summary="Answer a pending form: delivered to its audience and asker, and recorded",
    responses=_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def answer(form_id: str, body: AnswerRequest, request: Request, _: OperatorDep) -> FormInfo:
    return FormInfo.of(await hub_of(request).forms.answer(form_id, body.answers))


@operator_router.post(
    "/operator/forms/{form_id}/cancel",
    summary="Cancel a pending form; the asker is told (with the reason, if given)",
    responses=_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def cancel(
    form_id: str, request: Request, _: OperatorDep, body: ReasonRequest | None = None
) -> FormInfo:
    return FormInfo.of(await hub_of(request).forms.cancel(form_id, body.reason if body else None))


@operator_router.get(
    "/operator/decisions",
    summary="Every decision on the ledger, newest first",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=access(Access.VIEWER),
)
async def operator_decisions(request: Request, _: ViewerDep, limit: Limit = 20) -> DecisionList:
    return DecisionList.of(await hub_of(request).decisions.recent(limit, None))


@operator_router.get(
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
