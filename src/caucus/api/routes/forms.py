"""Operator forms and the decisions they become, over HTTP."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from caucus.domain.control import Role
from caucus.domain.forms import FormState
from caucus.domain.peers import Peer
from caucus.errors import InvalidRequest
from caucus.services.principals import Principal
from caucus.web.verbs import Call, serve
from caucus.wire.errors import ErrorBody
from caucus.wire.forms import DecisionList, FormInfo, FormList, LedgerStatusInfo
from caucus.wire.queries import DecisionsQuery, FormsQuery
from caucus.wire.requests import AnswerRequest, AskRequest, ReasonRequest
from caucus.wire.verbs import VERBS, oversight

router = APIRouter()

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


async def _forms_in(c: Call[Role, FormsQuery]) -> FormList:
    return FormList.of(await c.hub.forms.listing(_state(c.rq.state)))


async def _form(c: Call[Role, None]) -> FormInfo:
    return FormInfo.of(await c.hub.forms.get(c.path["form_id"]))


async def _answer(c: Call[Role, AnswerRequest]) -> FormInfo:
    return FormInfo.of(await c.hub.forms.answer(c.path["form_id"], c.rq.answers))


async def _cancel(c: Call[Role, ReasonRequest | None]) -> FormInfo:
    reason = c.rq.reason if c.rq else None
    return FormInfo.of(await c.hub.forms.cancel(c.path["form_id"], reason))


async def _decisions_all(c: Call[Role, DecisionsQuery]) -> DecisionList:
    return DecisionList.of(await c.hub.decisions.recent(c.rq.limit, None))


async def _ledger(c: Call[Role, None]) -> LedgerStatusInfo:
    return LedgerStatusInfo.of(await c.hub.decisions.status())


serve(router, oversight.OPERATOR_FORMS, _forms_in)
serve(router, oversight.OPERATOR_FORM, _form)
serve(router, oversight.ANSWER_FORM, _answer)
serve(router, oversight.CANCEL_FORM, _cancel)
serve(router, oversight.OPERATOR_DECISIONS, _decisions_all)
serve(router, oversight.LEDGER, _ledger)


def _state(state: str) -> FormState | None:
    if state == "all":
        return None
    try:
        return FormState(state)
    except ValueError:
        raise InvalidRequest("state is pending, answered, canceled or all", field="state") from None
