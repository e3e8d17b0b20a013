"""Operator forms: one bounded question to the human instead of ten scattered ones.

An agent asks (`ask`) with a title and typed fields, addressed to `all` or a #channel it
belongs to; asking the same form again while it is pending returns the first. Pending forms are
listed to every peer of their audience, so nobody asks twice. The operator answers (checked
against the fields) or cancels. The answer goes, in one transaction with the state change, to
the audience and to the asker (a direct copy if the audience message would miss them), in the
priority lane; a cancellation goes to the asker. Then the answer is recorded in the decision
ledger (`record`, the hub's `DecisionLog`), so the answered form comes back with the record's
hash; if the ledger refuses, the answer stands, delivered, and is recorded once it is restored.
A cancellation is recorded the same way. A form asking to approve a tool call carries the call
(`domain/approvals.py`): what the operator reads is what the approval is bound to.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from caucus.clock import Clock
from caucus.domain.approvals import check_bound, parse_call
from caucus.domain.caps import check_pending_forms
from caucus.domain.events import FormAsked, FormSettled
from caucus.domain.forms import (
    MAX_PENDING_PER_ASKER,
    Form,
    FormState,
    Reach,
    answer_lines,
    check_answer,
    check_title,
    parse_fields,
    settled,
)
from caucus.domain.messages import AppendOutcome, Lane, MessageKind, NewMessage, SystemSender
from caucus.domain.names import BROADCAST, Target, TargetKind, check_channel_name
from caucus.domain.peers import Peer
from caucus.domain.visibility import Reader, may_see_form
from caucus.errors import Forbidden, Hint, InvalidRequest, NotFound
from caucus.ids import MessageIds
from caucus.services.delivery import DeliveryService
from caucus.services.notifier import Notifier
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

MAX_REASON = 500


class Forms:
    def __init__(
        self,
        db: Engine,
        delivery: DeliveryService,
        notifier: Notifier,
        clock: Clock,
        record: Callable[[], Awaitable[object]] | None = None,
        *,
        max_pending: int = MAX_PENDING_PER_ASKER,
    ) -> None:
        self._record = record  # writes answered forms to the ledger
        self._max_pending = max_pending
        self._db = db
        self._delivery = delivery
        self._notifier = notifier
        self._clock = clock
        self._ids = MessageIds()

    # --- agents -------------------------------------------------------------------------------
    async def ask(
        self, peer: Peer, title: str, fields: Any, to: str = BROADCAST, call: Any = None
    ) -> Form:
        """Put a form to the operator. Returns the pending form (the earlier one, if this asker
        already has the same form pending). A form that asks to approve a tool call carries
        the call, and offers to approve exactly its digest."""
        title = check_title(title)
        parsed = parse_fields(fields)
        subject = None
        if call is not None:
            subject = parse_call(call)
            check_bound(subject, [o for f in parsed for o in f.options])
        audience = self._audience(to)
        now = self._clock.now()
        form = Form(
            id="f_" + self._ids.next().removeprefix("m_"),
            asker=peer.name,
            audience=audience,
            title=title,
            fields=parsed,
            state=FormState.PENDING,
            created_at=now,
            updated_at=now,
            call=subject,
        )
        cap = self._max_pending

        def ask(r: Repos) -> tuple[Form, bool]:
            if audience != BROADCAST and not r.channels.is_member(audience, peer.id):
                raise Forbidden(f"join {audience} before asking the operator on its behalf")
            same = r.forms.same_pending(form, peer.id)
            if same is not None:
                return same, True
            check_pending_forms(r.forms.pending_count(peer.id), cap)
            r.forms.insert(form, peer.id)
            return form, False

        stored, existing = await self._db.write(ask)
        if not existing:
            self._notifier.emit(FormAsked(now, stored))
        return stored

    async def visible(self, peer: Peer | None) -> list[Form]:
        """Pending forms this peer's audiences share: broadcast ones, its channels', its own
        (before joining, None: the broadcast ones)."""

        def visible(r: Repos) -> list[Form]:
            if peer is None:
                return [f for f in r.forms.listed(FormState.PENDING) if f.audience == BROADCAST]
            channels = set(r.channels.of_peer(peer.id))
            reader = Reader(peer.id)
            pending = r.forms.listed(FormState.PENDING)
            return [f for f in pending if _sees(reader, f, channels)]

        return await self._db.read(visible)

    @staticmethod
    def _audience(to: str) -> str:
        if to == BROADCAST:
            return BROADCAST
        if not to.startswith("#"):
            raise InvalidRequest("to is 'all' or a #channel you belong to", field="to")
        return check_channel_name(to)

    # --- the operator -------------------------------------------------------------------------
    async def listing(self, state: FormState | None = FormState.PENDING) -> list[Form]:
        """Forms in one state (pending ones oldest first), or all of them newest first."""
        return await self._db.read(lambda r: r.forms.listed(state))

    async def get(self, form_id: str) -> Form:
        form = await self._db.read(lambda r: r.forms.get(form_id))
        if form is None:
            raise NotFound(f"no form {form_id!r}", hint=Hint.LIST_FORMS, form_id=form_id)
        return form

    async def answer(self, form_id: str, answers: Any) -> Form:
        form = await self.get(form_id)
        checked = check_answer(form.fields, answers)
        answered = await self._settle(form_id, FormState.ANSWERED, checked, None)
        if self._record is None:
            return answered
        await self._record()
        return await self.get(form_id)

    async def withdraw(self, peer: Peer, form_id: str, reason: str | None = None) -> Form:
        """The asker takes its own pending form back (an approval that timed out): canceled,
        with its reason, on the ledger; a late answer then gets `form_closed`."""
        form = await self._db.read(lambda r: r.forms.get(form_id))
        if form is None or form.asker_id != peer.id:
            raise NotFound(f"no form {form_id!r} of yours", hint=Hint.LIST_FORMS, form_id=form_id)
        return await self.cancel(form_id, reason)

    async def cancel(self, form_id: str, reason: str | None = None) -> Form:
        """Decline to answer; the cancellation is recorded on the ledger like an answer."""
        if reason is not None and len(reason) > MAX_REASON:
            raise InvalidRequest(f"reason is at most {MAX_REASON} characters", field="reason")
        canceled = await self._settle(form_id, FormState.CANCELED, None, reason)
        if self._record is None:
            return canceled
        await self._record()
        return await self.get(form_id)

    async def _settle(
        self, form_id: str, state: FormState, answer: dict[str, Any] | None, reason: str | None
    ) -> Form:
        now = self._clock.now()
        tell = self._answer_messages if state is FormState.ANSWERED else self._cancel_messages

        def settle(r: Repos) -> tuple[Form, list[AppendOutcome]]:
            found = r.forms.with_asker(form_id)
            if found is None:
                raise NotFound(f"no form {form_id!r}", hint=Hint.LIST_FORMS, form_id=form_id)
            form, asker_id = found
            form.state = settled(form, state)  # Conflict for one settled already
            form.answer, form.reason, form.updated_at = answer, reason, now
            present = r.peers.present(asker_id)
            inside = present and (
                form.audience == BROADCAST or r.channels.is_member(form.audience, asker_id)
            )
            # Messages first: routing raises (a closed channel) before anything is written.
            outcomes = [r.inbox.append(m, t) for m, t in tell(form, Reach(present, inside))]
            if not r.forms.settle(form_id, state, answer, reason, now):
                raise AssertionError("a pending form read in this unit could not be settled")
            return form, outcomes

        form, outcomes = await self._db.write(settle)
        for outcome in outcomes:
            self._delivery.after_append(outcome)
        self._notifier.emit(FormSettled(now, form))
        return form

    # --- what the audience is told ------------------------------------------------------------
    def _message(
        self, form: Form, to: str, kind: MessageKind, content: str, **meta: Any
    ) -> NewMessage:
        return self._delivery.compose(
            SystemSender.OPERATOR,
            to,
            kind,
            content,
            meta={"form_id": form.id, "title": form.title, "asker": form.asker, **meta},
            thread=form.id,
            lane=Lane.PRIORITY,
            joins_channel=False,
        )

    def _answer_messages(self, form: Form, reach: Reach) -> list[tuple[NewMessage, Target]]:
        lines = answer_lines(form) or ["(no field filled in)"]
        text = "\n".join(
            [f"The operator answered {json.dumps(form.title)} (asked by {form.asker}):"]
            + [f"- {line}" for line in lines]
        )
        kind = TargetKind.ALL if form.audience == BROADCAST else TargetKind.CHANNEL
        answer = form.answer or {}
        out = [
            (
                self._message(form, form.audience, MessageKind.FORM_ANSWER, text, answers=answer),
                Target(kind, form.audience),
            )
        ]
        if reach.asker_present and not reach.asker_in_audience:
            copy = self._message(form, form.asker, MessageKind.FORM_ANSWER, text, answers=answer)
            out.append((copy, Target(TargetKind.PEER, form.asker)))
        return out

    def _cancel_messages(self, form: Form, reach: Reach) -> list[tuple[NewMessage, Target]]:
        if not reach.asker_present:
            return []
        text = f"The operator canceled your form {json.dumps(form.title)}"
        text += f": {form.reason}" if form.reason else "."
        message = self._message(
            form, form.asker, MessageKind.FORM_CANCELED, text, reason=form.reason
        )
        return [(message, Target(TargetKind.PEER, form.asker))]


def _sees(reader: Reader, form: Form, channels: set[str]) -> bool:
    asker = form.asker_id if form.asker_id is not None else -1
    return may_see_form(reader, asker_id=asker, audience=form.audience, channels=channels)
