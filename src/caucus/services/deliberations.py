"""Live deliberation: the panel is the agents in the room.

`convene` starts the engine (`deliberation/engine.py`) over panelists who are peers: each
round, each gets a position request as a task from the convener, and answers with
`submit_position` (or a task reply holding the JSON). A panelist that misses the deadline is
recorded as absent and not asked again. The chair is the operator (a form in the console), a
peer (a task), or the hub's chair model. The verdict is chained onto the ledger, announced to
the room (or the panel's channel), and every step is an event the console shows.

The running deliberation lives in the process that convened it (ADR 0019). What a panelist
does reaches it from any process: a position completes the request's task in the shared
store and tells the convener, whose wake-up makes the driver read it (`Bench.answer`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.deliberation.engine import (
    Outcome,
    Step,
    deliberate,
)
from caucus.deliberation.evidence import EvidenceError, normalise
from caucus.deliberation.panel import (
    MAX_ROUNDS,
    InvalidAnswer,
    Position,
    position_of,
)
from caucus.deliberation.prompts import Ask, position_request
from caucus.domain.deliberations import Deliberation, DeliberationState
from caucus.domain.messages import Lane, MessageKind, SystemSender
from caucus.domain.names import BROADCAST, Target, TargetKind
from caucus.domain.peers import Peer
from caucus.domain.tasks import TaskState
from caucus.errors import Conflict, Forbidden, InvalidRequest, NotFound
from caucus.services.channels import Channels
from caucus.services.decisions import DecisionLog
from caucus.services.deliberation_seats import (
    STANCES,
    Bench,
    FormChair,
    Live,
    ModelChair,
    Panelist,
    PeerChair,
)
from caucus.services.delivery import DeliveryService
from caucus.services.forms import Forms
from caucus.services.notifier import Notifier
from caucus.services.registry import Registry
from caucus.services.tasks import TaskService

log = logging.getLogger(__name__)

MAX_SUBJECT = 500
MAX_PANEL = 8
MAX_SUMMARY = 1000
DEADLINE_RANGE = (5.0, 3600.0)


class Deliberations:
    def __init__(
        self,
        *,
        registry: Registry,
        channels: Channels,
        tasks: TaskService,
        forms: Forms,
        decisions: DecisionLog,
        delivery: DeliveryService,
        notifier: Notifier,
        clock: Clock,
        settings: Settings,
    ) -> None:
        self._registry = registry
        self._channels = channels
        self._tasks = tasks
        self._forms = forms
        self._decisions = decisions
        self._delivery = delivery
        self._notifier = notifier
        self._clock = clock
        self._settings = settings
        self._live: dict[str, Live] = {}
        self._bench = Bench(tasks, forms, notifier, clock, settings)

    # --- reading ---------------------------------------------------------------------------
    def get(self, deliberation_id: str) -> Deliberation:
        live = self._live.get(deliberation_id)
        if live is None:
            raise NotFound(
                f"no deliberation {deliberation_id!r} runs on this hub",
                deliberation=deliberation_id,
            )
        return live.info()

    def listing(self) -> list[Deliberation]:
        return [d.info() for d in sorted(self._live.values(), key=lambda d: -d.created_at)]

    # --- convening -------------------------------------------------------------------------
    async def convene(
        self,
        peer: Peer,
        *,
        subject: str,
        panel: Sequence[str] | str,
        chair: str = "operator",
        evidence: Sequence[Mapping[str, Any]] = (),
        rounds: int = 2,
        deadline: float = 300.0,
    ) -> Deliberation:
        subject = subject.strip()
        if not subject or len(subject) > MAX_SUBJECT:
            raise InvalidRequest(f"subject is 1-{MAX_SUBJECT} characters", field="subject")
        if not 1 <= rounds <= MAX_ROUNDS:
            raise InvalidRequest(f"rounds is 1-{MAX_ROUNDS}", field="rounds")
        low, high = DEADLINE_RANGE
        if not low <= deadline <= high:
            raise InvalidRequest(f"deadline is {low:g}-{high:g} seconds", field="deadline")
        names, audience = await self._panel(peer, panel)
        chair = await self._chair(peer, chair, names)
        try:
            items = normalise(list(evidence), source=peer.name, where="evidence")
        except EvidenceError as exc:
            raise InvalidRequest(str(exc), field="evidence") from None
        now = self._clock.now()
        live = Live(
            id="d_" + secrets.token_hex(6),
            subject=subject,
            convener=peer,
            chair=chair,
            audience=audience,
            panel=names,
            max_rounds=rounds,
            deadline=deadline,
            evidence=items,
            created_at=now,
            updated_at=now,
        )
        first = position_request(live.id, Ask(subject, items, STANCES, 1), rounds, deadline)
        if len(first) > self._settings.max_content_chars - 2000:
            raise InvalidRequest(
                "the subject and evidence leave no room for the panel's positions in a request "
                f"({len(first)} characters of {self._settings.max_content_chars}); cite less",
                field="evidence",
            )
        self._delivery.check_can_send(peer)
        self._live[live.id] = live
        live.driver = asyncio.create_task(self._drive(live), name=f"caucus-{live.id}")
        self._changed(live)
        return live.info()

    async def _panel(self, peer: Peer, panel: Sequence[str] | str) -> tuple[list[str], str]:
        if isinstance(panel, str):
            if not panel.startswith("#"):
                raise InvalidRequest("panel is a list of peer names or a #channel", field="panel")
            found = {c.name: c for c in await self._channels.visible(peer)}.get(panel)
            if found is None:
                raise NotFound(f"no channel {panel}", field="panel")
            if peer.name not in found.members:
                raise Forbidden(f"join {panel} before convening its members")
            names = [m for m in found.members if m != peer.name]
            audience = panel
        else:
            names = list(dict.fromkeys(panel))
            audience = BROADCAST
        if not names:
            raise InvalidRequest("the panel is empty", field="panel")
        if len(names) > MAX_PANEL:
            raise InvalidRequest(f"a panel has at most {MAX_PANEL} members", field="panel")
        if peer.name in names:
            raise InvalidRequest("the convener does not sit on its own panel", field="panel")
        for name in names:
            await self._registry.find(name)
        return names, audience

    async def _chair(self, peer: Peer, chair: str, panel: list[str]) -> str:
        if chair == "operator":
            return chair
        if chair == "model":
            if not self._settings.chair_model:
                raise InvalidRequest(
                    "no chair model: start the hub with CAUCUS_CHAIR_MODEL (and "
                    "CAUCUS_CHAIR_BASE_URL), or let the operator or a peer chair",
                    field="chair",
                )
            return chair
        if chair in panel or chair == peer.name:
            raise InvalidRequest(
                "the chair is neither the convener nor on the panel", field="chair"
            )
        await self._registry.find(chair)
        return chair

    # --- answering -------------------------------------------------------------------------
    async def submit(
        self,
        peer: Peer,
        deliberation_id: str,
        *,
        stance: str,
        summary: str,
        confidence: float,
        evidence: Sequence[str] = (),
    ) -> Position:
        """A panelist's position for the round under way, or the chair's verdict (summary is
        the decision)."""
        if len(summary) > MAX_SUMMARY:
            raise InvalidRequest(f"summary is at most {MAX_SUMMARY} characters", field="summary")
        answer = {
            "stance": stance,
            "summary": summary,
            "confidence": confidence,
            "evidence": list(evidence),
        }
        try:
            position = position_of(peer.name, answer, STANCES)
        except InvalidAnswer as exc:
            raise InvalidRequest(str(exc), field="answer") from None
        live = self._live.get(deliberation_id)
        request = live.open.get(peer.name) if live is not None else None
        task_id = request.task_id if request else await self._open_task(peer, deliberation_id)
        text = json.dumps({**answer, "stance": position.stance, "summary": position.summary})
        await self._tasks.reply(peer, task_id, text)
        if request is not None and not request.answer.done():
            request.answer.set_result(position)
        return position

    async def _open_task(self, peer: Peer, deliberation_id: str) -> str:
        """The request this peer holds for `deliberation_id` in the shared store (a
        deliberation driven by another hub process)."""
        for state in (TaskState.IN_PROGRESS, TaskState.PENDING):
            for task in await self._tasks.listing(peer, "received", state.value):
                if task.thread == deliberation_id:
                    return task.id
        asked = await self._tasks.listing(peer, "received", None)
        known = deliberation_id in self._live or any(t.thread == deliberation_id for t in asked)
        if not known:
            raise NotFound(
                f"no deliberation {deliberation_id!r} asked you for a position",
                deliberation=deliberation_id,
            )
        raise Conflict(
            f"deliberation {deliberation_id} is not asking you for a position now",
            deliberation=deliberation_id,
        )

    # --- the driver ------------------------------------------------------------------------
    def _changed(self, live: Live) -> None:
        self._bench.changed(live)

    def _step(self, live: Live) -> Any:
        def on_step(step: Step) -> None:
            if step.kind == "asking" and step.round != live.round:
                if live.current:
                    live.rounds.append(live.current)
                live.round, live.current = step.round, []
            elif step.kind == "deciding":
                if live.current:
                    live.rounds.append(live.current)
                live.current = []
                live.state = DeliberationState.DECIDING
            elif step.kind == "absent" and step.who not in live.absent:
                live.absent.append(step.who)
            self._changed(live)

        return on_step

    async def _drive(self, live: Live) -> None:
        try:
            outcome = await deliberate(
                live.subject,
                [Panelist(self._bench, live, n) for n in live.panel],
                await self._chair_for(live),
                evidence=live.evidence,
                stances=STANCES,
                max_rounds=live.max_rounds,
                on_step=self._step(live),
            )
            live.rounds = outcome.rounds
            live.verdict = outcome.verdict
            await self._record(live, outcome)
            live.state = DeliberationState.DECIDED
        except asyncio.CancelledError:
            live.state, live.error = DeliberationState.FAILED, "the hub stopped before a decision"
            raise
        except Exception as exc:  # DeliberationError, or the ledger refusing the record
            log.warning("deliberation %s failed: %s", live.id, exc)
            live.state, live.error = DeliberationState.FAILED, str(exc)
        finally:
            for request in live.open.values():
                with contextlib.suppress(Exception):
                    await self._tasks.cancel(live.convener, request.task_id)
            live.open.clear()
            self._changed(live)

    async def _record(self, live: Live, outcome: Outcome) -> None:
        extra: dict[str, Any] = {
            "caucus": {
                "deliberation": live.id,
                "convener": live.convener.name,
                "audience": live.audience,
                "panel": live.panel,
            }
        }
        if live.chair_form:
            extra["caucus"]["chair_form"] = live.chair_form
        index, sealed = await self._decisions.record(outcome.record(**extra))
        live.record_index, live.record_hash = index, sealed["hash"]
        v = outcome.verdict
        text = f"Decided ({live.id}): {live.subject} — {v.decision} ({round(v.confidence * 100)}%"
        text += f" confidence, chair {live.chair})."
        if outcome.dissent:
            text += " Dissent: " + ", ".join(p.agent for p in outcome.dissent) + "."
        if outcome.absent:
            text += " Absent: " + ", ".join(outcome.absent) + "."
        text += f" On the record: decision {index}, hash {sealed['hash'][:12]}."
        target = (
            Target(TargetKind.ALL, BROADCAST)
            if live.audience == BROADCAST
            else Target(TargetKind.CHANNEL, live.audience)
        )
        await self._delivery.route(
            self._delivery.compose(
                SystemSender.HUB,
                target.name,
                MessageKind.SYSTEM,
                text,
                meta={"deliberation": live.id, "decision_index": index, "hash": sealed["hash"]},
                thread=live.id,
                lane=Lane.PRIORITY,
                joins_channel=False,
            ),
            target,
        )

    async def _chair_for(self, live: Live) -> Any:
        if live.chair == "operator":
            return FormChair(self._bench, live)
        if live.chair == "model":
            return ModelChair(self._settings)
        return PeerChair(self._bench, live)

    async def stop(self) -> None:
        for live in self._live.values():
            if live.driver is not None and not live.driver.done():
                live.driver.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await live.driver
