"""Who sits on a live deliberation: panelists who are peers (a task per round), and the three
kinds of chair (a peer's task, the operator's form, the hub's model). Each meets the engine's
`Panelist` or `Chair` protocol and works through the `Deliberations` service that owns the
deliberation's live state."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from caucus.config import Settings
from caucus.deliberation.backends import CallableBackend, OpenAICompleter
from caucus.deliberation.engine import Absent, Brief, DeliberationError
from caucus.deliberation.engine import ModelChair as EngineChair
from caucus.deliberation.panel import InvalidAnswer, Position, Verdict, verdict_of
from caucus.deliberation.prompts import Ask, chair_request, position_request
from caucus.domain.forms import FormState

if TYPE_CHECKING:
    from caucus.services.deliberations import Deliberations, Live

POLL = 0.5  # seconds between reads of the chair's form
CONFIDENCES = [f"{n}%" for n in range(100, 0, -10)]
CUTS = (None, 400, 150)  # how far others' summaries are shortened to fit a request


@dataclass(slots=True)
class Request:
    task_id: str
    round: int
    answer: asyncio.Future[Position]


class Panelist:
    def __init__(self, service: Deliberations, live: Live, name: str) -> None:
        self._s = service
        self._live = live
        self.name = name

    async def position(self, ask: Ask) -> Position:
        live = self._live
        limit = self._s._settings.max_content_chars
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
        task_id = await self._s._ask(
            live, self.name, payload, f"position on {live.id}, round {ask.round}"
        )
        request = Request(task_id, ask.round, asyncio.get_running_loop().create_future())
        live.open[self.name] = request
        self._s._changed(live)
        position = await self._s._await(live, self.name, request)
        live.answered.setdefault(self.name, []).append(ask.round)
        live.current.append(position)
        self._s._changed(live)
        return position


class PeerChair:
    def __init__(self, service: Deliberations, live: Live) -> None:
        self._s = service
        self._live = live
        self.name = live.chair

    async def decide(self, brief: Brief) -> Verdict:
        live = self._live
        limit = self._s._settings.max_content_chars
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
        task_id = await self._s._ask(live, self.name, payload, f"chair {live.id}")
        request = Request(task_id, live.round, asyncio.get_running_loop().create_future())
        live.open[self.name] = request
        try:
            said = await self._s._await(live, self.name, request)
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

    def __init__(self, service: Deliberations, live: Live) -> None:
        self._s = service
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
        title = f"Chair {live.id}: {live.subject}"
        form = await self._s._forms.ask(live.convener, title[:200], fields, live.audience)
        live.chair_form = form.id
        self._s._changed(live)
        loop = asyncio.get_running_loop()
        end = loop.time() + self._s._settings.task_ttl
        while loop.time() < end:
            found = await self._s._forms.get(form.id)
            if found.state is FormState.CANCELED:
                raise DeliberationError("the operator declined to chair (the form was canceled)")
            if found.state is FormState.ANSWERED and found.answer is not None:
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
                    raise DeliberationError(
                        f"the operator's answer is not a verdict: {exc}"
                    ) from None
            await asyncio.sleep(POLL)
        raise DeliberationError("the operator did not chair within the task time to live")
