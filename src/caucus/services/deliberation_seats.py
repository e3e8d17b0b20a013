"""Who sits on a live deliberation, and the bench they work from.

`Live` is a deliberation's state while it runs; `Bench` is the seam its seats use (send a
request, wait for its answer, ask the operator and wait for the form, say the state changed),
so no seat reaches into the service. Seats are panelists who are peers (a task per round) and
the three kinds of chair (a peer's task, the operator's form, the hub's model); each meets the
engine's `Panelist` or `Chair` protocol.

Waiting is on events, not polls: an answer submitted through this process resolves its
request at once; any other settling (a task reply or failure, a form answered or canceled, in
this process or another sharing the database) sends the convener a message, whose wake-up
makes the bench read again. The deadline bounds every wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.deliberation.backends import CallableBackend, OpenAICompleter
from caucus.deliberation.engine import Absent, Brief, DeliberationError
from caucus.deliberation.engine import ModelChair as EngineChair
from caucus.deliberation.extract import Malformed, last_object
from caucus.deliberation.panel import (
    DEFAULT_STANCES,
    InvalidAnswer,
    Position,
    Verdict,
    dissent,
    position_of,
    verdict_of,
)
from caucus.deliberation.prompts import Ask, chair_request, position_request
from caucus.domain.deliberations import Deliberation, DeliberationState, Ruling, Seat, Stand
from caucus.domain.events import DeliberationChanged, Event, FormSettled
from caucus.domain.forms import Form, FormState
from caucus.domain.peers import Peer
from caucus.domain.tasks import TaskState
from caucus.services.forms import Forms
from caucus.services.notifier import Notifier
from caucus.services.tasks import TaskService

STANCES = DEFAULT_STANCES
CONFIDENCES = [f"{n}%" for n in range(100, 0, -10)]
CUTS = (None, 400, 150)  # how far others' summaries are shortened to fit a request
ENDED = (TaskState.FAILED, TaskState.CANCELED, TaskState.EXPIRED)


@dataclass(slots=True)
class Request:
    task_id: str
    round: int
    answer: asyncio.Future[Position]


@dataclass(slots=True)
class Live:
    id: str
    subject: str
    convener: Peer
    chair: str  # operator | model | a peer's name
    audience: str  # all | #channel: who the record and the announcement are for
    panel: list[str]
    max_rounds: int
    deadline: float
    evidence: list[dict[str, Any]]
    created_at: float
    updated_at: float
    state: DeliberationState = DeliberationState.DELIBERATING
    round: int = 0
    rounds: list[list[Position]] = field(default_factory=list)
    current: list[Position] = field(default_factory=list)
    answered: dict[str, list[int]] = field(default_factory=dict)
    absent: list[str] = field(default_factory=list)
    open: dict[str, Request] = field(default_factory=dict)
    verdict: Verdict | None = None
    record_index: int | None = None
    record_hash: str | None = None
    chair_form: str | None = None
    error: str | None = None
    driver: asyncio.Task[None] | None = None

    def info(self) -> Deliberation:
        rounds = [*self.rounds, self.current] if self.current else list(self.rounds)
        final = self.rounds[-1] if self.rounds else []
        return Deliberation(
            deliberation_id=self.id,
            subject=self.subject,
            convener=self.convener.name,
            chair=self.chair,
            state=self.state,
            round=self.round,
            max_rounds=self.max_rounds,
            deadline_seconds=self.deadline,
            panel=tuple(
                Seat(
                    name=n,
                    answered=tuple(self.answered.get(n, ())),
                    absent=n in self.absent,
                    task_id=self.open[n].task_id if n in self.open else None,
                )
                for n in self.panel
            ),
            rounds=tuple(tuple(_stand(p) for p in r) for r in rounds),
            verdict=None
            if self.verdict is None
            else Ruling(self.verdict.stance, self.verdict.decision, self.verdict.confidence),
            dissent=tuple(p.agent for p in dissent(final, self.verdict)) if self.verdict else (),
            record_index=self.record_index,
            record_hash=self.record_hash,
            chair_form=self.chair_form,
            error=self.error,
            created_at=self.created_at,
            updated_at=self.updated_at,
        )


def _stand(p: Position) -> Stand:
    return Stand(p.agent, p.stance, p.summary, p.confidence, tuple(p.evidence))


def answer_of(agent: str, text: str | None) -> Position:
    """A position a panelist wrote as its task's reply."""
    try:
        return position_of(agent, last_object(text or ""), STANCES)
    except (Malformed, InvalidAnswer) as exc:
        raise Absent(f"answered without a usable position ({exc})") from None


class Bench:
    """What a seat may do, and nothing else of the service."""

    def __init__(
        self,
        tasks: TaskService,
        forms: Forms,
        notifier: Notifier,
        clock: Clock,
        settings: Settings,
    ) -> None:
        self._tasks = tasks
        self._forms = forms
        self._notifier = notifier
        self._clock = clock
        self.settings = settings

    def changed(self, live: Live) -> None:
        """The deliberation moved: the console hears of it."""
        live.updated_at = self._clock.now()
        self._notifier.emit(DeliberationChanged(live.updated_at, live.id, live.info()))

    async def request(self, live: Live, to: str, payload: str, subject: str, rnd: int) -> Request:
        """Send `to` a request as a task from the convener; it is open until answered."""
        task = await self._tasks.send(
            live.convener, to=to, payload=payload, subject=subject, thread=live.id
        )
        request = Request(task.id, rnd, asyncio.get_running_loop().create_future())
        live.open[to] = request
        self.changed(live)
        return request

    async def answer(self, live: Live, who: str, request: Request) -> Position:
        """The answer to `request`: at once when it comes through `submit` here, else read
        from its task as it changes (`TaskService.follow`); Absent past the deadline or when
        the task ended otherwise."""
        if self._notifier.closing:
            raise DeliberationError("the hub is stopping")
        until = self._clock.monotonic() + live.deadline  # the hub's clock: a test moves it
        follow = self._tasks.follow(
            live.convener, request.task_id, until=until, ended=(request.answer,)
        )
        try:
            async with contextlib.aclosing(follow) as changes:
                async for task in changes:
                    if task.state is TaskState.COMPLETED:
                        return answer_of(who, task.result)
                    if task.state in ENDED:
                        raise Absent(f"the request was {task.state.value}")
            if request.answer.done():
                return request.answer.result()
            if self._notifier.closing:
                raise DeliberationError("the hub is stopping")
            raise Absent(f"no answer within {live.deadline:g} s")
        finally:
            live.open.pop(who, None)

    async def ask_operator(self, live: Live, title: str, fields: list[dict[str, Any]]) -> Form:
        form = await self._forms.ask(live.convener, title[:200], fields, live.audience)
        live.chair_form = form.id
        self.changed(live)
        return form

    async def settled(self, live: Live, form_id: str, within: float) -> Form | None:
        """The form once answered or canceled (None: neither within `within` seconds)."""
        alarm = self._clock.alarm(self._clock.monotonic() + within)
        try:
            while True:
                with self._woken(live, form_id) as woken:
                    found = await self._forms.get(form_id)
                    if found.state in (FormState.ANSWERED, FormState.CANCELED):
                        return found
                    if alarm.done():
                        return None
                    await asyncio.wait({woken, alarm}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            alarm.cancel()

    @contextlib.contextmanager
    def _woken(self, live: Live, form_id: str | None = None) -> Any:
        """A future done when the convener's inbox changes (a reply or a form's answer reaches
        it, from any hub process) or, for `form_id`, when this process settles that form.
        Taken before the read it guards, so nothing settles unseen between the two."""
        notifier = self._notifier
        if notifier.closing:
            raise DeliberationError("the hub is stopping")
        with notifier.woken(live.convener.id) as woken:

            def on_event(event: Event) -> None:
                settled = isinstance(event, FormSettled) and event.form.id == form_id
                if settled and not woken.done():
                    woken.set_result(None)

            unsubscribe = notifier.subscribe(on_event) if form_id is not None else None
            try:
                yield woken
            finally:
                if unsubscribe is not None:
                    unsubscribe()


class Panelist:
    def __init__(self, bench: Bench, live: Live, name: str) -> None:
        self._bench = bench
        self._live = live
        self.name = name

    async def position(self, ask: Ask) -> Position:
        live = self._live
        limit = self._bench.settings.max_content_chars
        payload = next(
            (
                text
                for cut in CUTS
                if len(
                    text := position_request(live.id, ask, live.max_rounds, live.deadline, cut=cut)
                )
                <= limit
            ),
            None,
        )
        if payload is None:
            raise Absent("the others' positions do not fit in a request")
        subject = f"position on {live.id}, round {ask.round}"
        request = await self._bench.request(live, self.name, payload, subject, ask.round)
        position = await self._bench.answer(live, self.name, request)
        live.answered.setdefault(self.name, []).append(ask.round)
        live.current.append(position)
        self._bench.changed(live)
        return position


class PeerChair:
    def __init__(self, bench: Bench, live: Live) -> None:
        self._bench = bench
        self._live = live
        self.name = live.chair

    async def decide(self, brief: Brief) -> Verdict:
        live = self._live
        limit = self._bench.settings.max_content_chars
        payload = next(
            (
                text
                for cut in CUTS
                if len(
                    text := chair_request(
                        live.id,
                        brief.subject,
                        brief.evidence,
                        brief.positions,
                        brief.stances,
                        live.deadline,
                        cut=cut,
                    )
                )
                <= limit
            ),
            None,
        )
        if payload is None:
            raise DeliberationError("the final positions do not fit in the chair's request")
        request = await self._bench.request(
            live, self.name, payload, f"chair {live.id}", live.round
        )
        try:
            said = await self._bench.answer(live, self.name, request)
        except Absent as exc:
            raise DeliberationError(f"the chair {self.name} did not decide: {exc}") from None
        return Verdict(said.stance, said.summary, said.confidence)


class ModelChair:
    """The hub's chair model (its client opened for the decision and closed after)."""

    name = "model"

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    async def decide(self, brief: Brief) -> Verdict:
        s = self._settings
        key = os.environ.get(s.chair_api_key_env) if s.chair_api_key_env else None
        model = OpenAICompleter(model=s.chair_model, base_url=s.chair_base_url, api_key=key)
        try:
            chair = EngineChair(CallableBackend(model.complete), lambda _: None, name="model")
            return await chair.decide(brief)
        finally:
            await model.close()


class FormChair:
    """The operator chairs through a form: stance, decision, confidence."""

    name = "operator"

    def __init__(self, bench: Bench, live: Live) -> None:
        self._bench = bench
        self._live = live

    async def decide(self, brief: Brief) -> Verdict:
        live = self._live
        fields = [
            {
                "key": "stance",
                "label": "Your verdict's stance",
                "type": "radio",
                "options": list(brief.stances),
                "required": True,
            },
            {
                "key": "decision",
                "label": "The decision, with its main reason",
                "type": "textarea",
                "required": True,
            },
            {
                "key": "confidence",
                "label": "Your confidence in it",
                "type": "radio",
                "options": CONFIDENCES,
                "required": True,
            },
        ]
        form = await self._bench.ask_operator(live, f"Chair {live.id}: {live.subject}", fields)
        found = await self._bench.settled(live, form.id, self._bench.settings.task_ttl)
        if found is None:
            raise DeliberationError("the operator did not chair within the task time to live")
        if found.state is FormState.CANCELED or found.answer is None:
            raise DeliberationError("the operator declined to chair (the form was canceled)")
        a = found.answer
        try:
            return verdict_of(
                {
                    "stance": a.get("stance"),
                    "decision": a.get("decision"),
                    "confidence": int(str(a.get("confidence", "")).rstrip("%")) / 100,
                },
                brief.stances,
            )
        except (InvalidAnswer, ValueError) as exc:
            raise DeliberationError(f"the operator's answer is not a verdict: {exc}") from None
