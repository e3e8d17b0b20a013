"""A deliberation: the panel answers in parallel, rebuts while it disagrees, the chair decides.

Who sits on the panel and who chairs is open: `Panelist` and `Chair` are small protocols, met
by analysts on a model (`ModelAnalyst`, `ModelChair`, here) and by live agents in the hub
(`convene`). The engine owns only the rules: parallel rounds, when to stop, absence, dissent,
and the record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from caucus.deliberation.backends import CallableBackend
from caucus.deliberation.extract import Malformed, last_object
from caucus.deliberation.panel import (
    Analyst,
    InvalidAnswer,
    Position,
    Verdict,
    check_panel,
    dissent,
    position_of,
    position_schema,
    settled,
    unanimous,
    verdict_of,
    verdict_schema,
)
from caucus.deliberation.prompts import Ask, analyst_prompt, chair_prompt
from caucus.ledger.records import DecisionRecord

ATTEMPTS = 2


class DeliberationError(Exception):
    """The deliberation could not reach a decision; the message names who failed and why."""


class Absent(Exception):
    """A live panelist that did not answer in time: recorded as absent, not waited on."""


@dataclass(frozen=True, slots=True)
class Step:
    """Progress, for a person watching: `kind` is asking, answered, retrying, absent,
    deciding or decided."""

    kind: str
    who: str
    round: int
    detail: str = ""


OnStep = Callable[[Step], None]


class Panelist(Protocol):
    @property
    def name(self) -> str: ...

    async def position(self, ask: Ask) -> Position: ...


@dataclass(frozen=True, slots=True)
class Brief:
    """What the chair is shown: the subject, the evidence and every final position."""

    subject: str
    evidence: Sequence[Mapping[str, Any]]
    positions: Sequence[Position]
    stances: Sequence[str]


class Chair(Protocol):
    @property
    def name(self) -> str: ...

    async def decide(self, brief: Brief) -> Verdict: ...


def again(prompt: str, unusable: str | None) -> str:
    """The prompt for another attempt: after an unusable answer, it says what was wrong, as a
    reviewer would (a model that left a field empty mostly fills it when told)."""
    if unusable is None:
        return prompt
    return (
        f"{prompt}\n\nYour previous answer could not be used: {unusable}. Answer again with one "
        "complete JSON object, every field filled in."
    )


async def _attempts(
    who: str, call: Callable[[str | None], Any], on_step: OnStep, round_: int
) -> Any:
    """`call` up to ATTEMPTS times: a backend failure and an unusable answer both retry; the
    next attempt is told what was unusable."""
    last = ""
    unusable: str | None = None
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await call(unusable)
        except (Malformed, InvalidAnswer) as exc:
            unusable = str(exc)
            last = f"its answer was unusable: {exc}"
        except Exception as exc:
            unusable = None
            last = f"the backend failed: {exc}"
        if attempt < ATTEMPTS:
            on_step(Step("retrying", who, round_, last))
    raise DeliberationError(f"{who} failed after {ATTEMPTS} attempts — {last}")


class ModelAnalyst:
    """An analyst with a charge, answering on a model."""

    def __init__(self, analyst: Analyst, backend: CallableBackend, on_step: OnStep) -> None:
        self.analyst = analyst
        self._backend = backend
        self._on_step = on_step

    @property
    def name(self) -> str:
        return self.analyst.name

    async def position(self, ask: Ask) -> Position:
        prompt = analyst_prompt(self.analyst, ask, tools=self._backend.tools)

        async def once(unusable: str | None) -> Position:
            said = await self._backend.complete(
                again(prompt, unusable), schema=position_schema(ask.stances)
            )
            return position_of(self.name, last_object(said), ask.stances)

        result: Position = await _attempts(self.name, once, self._on_step, ask.round)
        return result


class ModelChair:
    def __init__(self, backend: CallableBackend, on_step: OnStep, name: str = "chair") -> None:
        self._backend = backend
        self._on_step = on_step
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    async def decide(self, brief: Brief) -> Verdict:
        prompt = chair_prompt(
            brief.subject,
            brief.evidence,
            brief.positions,
            brief.stances,
            tools=self._backend.tools,
        )

        async def once(unusable: str | None) -> Verdict:
            said = await self._backend.complete(
                again(prompt, unusable), schema=verdict_schema(brief.stances)
            )
            return verdict_of(last_object(said), brief.stances)

        result: Verdict = await _attempts(self.name, once, self._on_step, 0)
        return result


@dataclass(slots=True)
class Outcome:
    subject: str
    evidence: list[dict[str, Any]]
    rounds: list[list[Position]]
    verdict: Verdict
    chair: str
    absent: list[str] = field(default_factory=list)

    @property
    def positions(self) -> list[Position]:
        return self.rounds[-1]

    @property
    def dissent(self) -> list[Position]:
        return dissent(self.positions, self.verdict)

    def record(self, **extra: Any) -> DecisionRecord:
        """The ledger record: `rounds` only when there was more than one (schema 0.2)."""
        more: dict[str, Any] = {"chair": self.chair, "stance": self.verdict.stance, **extra}
        if self.absent:
            more["absent"] = list(self.absent)
        return DecisionRecord(
            subject=self.subject,
            decision=self.verdict.decision,
            confidence=self.verdict.confidence,
            positions=[p.recorded() for p in self.positions],
            dissent=[p.recorded() for p in self.dissent],
            evidence=self.evidence,
            rounds=[[p.recorded() for p in r] for r in self.rounds] if len(self.rounds) > 1 else [],
            extra=more,
        )


def _quiet(step: Step) -> None:
    return None


async def deliberate(
    subject: str,
    panel: Sequence[Panelist],
    chair: Chair,
    *,
    evidence: Sequence[Mapping[str, Any]] = (),
    stances: Sequence[str],
    max_rounds: int = 2,
    on_step: OnStep = _quiet,
) -> Outcome:
    """Run the deliberation to a verdict, or raise DeliberationError naming who failed."""
    if not subject.strip():
        raise DeliberationError("the subject is empty: say what is to be decided")
    check_panel([Analyst(p.name, "") for p in panel], stances, max_rounds)
    items = [dict(e) for e in evidence]
    present = list(panel)
    absent: list[str] = []
    rounds: list[list[Position]] = []
    while True:
        number = len(rounds) + 1
        previous = {p.agent: p for p in rounds[-1]} if rounds else {}
        asks = {
            p.name: Ask(
                subject,
                items,
                stances,
                number,
                own=previous.get(p.name),
                others=[q for q in previous.values() if q.agent != p.name],
            )
            for p in present
        }
        for p in present:
            on_step(Step("asking", p.name, number))
        results = await asyncio.gather(
            *(p.position(asks[p.name]) for p in present), return_exceptions=True
        )
        answered: list[Position] = []
        for panelist, result in zip(present, results, strict=True):
            if isinstance(result, Absent):
                absent.append(panelist.name)
                on_step(Step("absent", panelist.name, number, str(result)))
            elif isinstance(result, BaseException):
                raise result
            else:
                answered.append(result)
                on_step(Step("answered", panelist.name, number, _said(result)))
        if not answered:
            raise DeliberationError(
                f"no analyst answered in round {number}: {', '.join(absent)} absent"
            )
        present = [p for p in present if p.name not in absent]
        stalled = bool(rounds) and settled(rounds[-1], answered)
        rounds.append(answered)
        if unanimous(answered) or stalled or number >= max_rounds:
            break
    on_step(Step("deciding", chair.name, len(rounds)))
    verdict = await chair.decide(Brief(subject, items, rounds[-1], stances))
    on_step(Step("decided", chair.name, len(rounds), _said(verdict)))
    return Outcome(subject, items, rounds, verdict, chair.name, absent)


def _said(answer: Position | Verdict) -> str:
    return f"{answer.stance}, {round(answer.confidence * 100)}%"
