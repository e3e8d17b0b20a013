"""The panel's vocabulary and rules: analysts, positions, verdicts, and when rounds stop.

Pure values and functions, no I/O: the engine asks, these decide.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from caucus.ledger.records import RecordedPosition

DEFAULT_STANCES: tuple[str, ...] = ("approve", "reject", "defer")
MAX_ROUNDS = 4


@dataclass(frozen=True, slots=True)
class Analyst:
    name: str
    charge: str


DEFAULT_PANEL: tuple[Analyst, ...] = (
    Analyst(
        "advocate",
        "Make the strongest honest case for acting on the subject: what it gains, what the "
        "evidence supports, what it would cost not to.",
    ),
    Analyst(
        "skeptic",
        "Find what is wrong with acting on the subject: the risks, the gaps in the evidence, "
        "the cheaper or safer alternatives. Do not concede without a reason.",
    ),
    Analyst(
        "assessor",
        "Weigh the subject on the evidence alone, as an impartial reviewer: what is known, "
        "what is not, and what a careful person would decide today.",
    ),
)


class InvalidAnswer(ValueError):
    """An answer that is JSON but not a usable position or verdict."""


@dataclass(frozen=True, slots=True)
class Position:
    agent: str
    stance: str
    summary: str
    confidence: float
    evidence: tuple[str, ...] = ()

    def recorded(self) -> RecordedPosition:
        return RecordedPosition(
            self.agent, self.stance, self.summary, self.confidence, self.evidence
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    stance: str
    decision: str
    confidence: float


def _confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidAnswer("confidence must be a number from 0 to 1")
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise InvalidAnswer(f"confidence must be from 0 to 1, not {value}")
    return float(value)


def _stance(value: Any, stances: Sequence[str]) -> str:
    if not isinstance(value, str) or value.strip().lower() not in stances:
        raise InvalidAnswer(f"stance must be one of {', '.join(stances)}, not {value!r}")
    return value.strip().lower()


def _text(answer: Mapping[str, Any], key: str) -> str:
    value = answer.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidAnswer(f"{key} must be a non-empty string")
    return value.strip()


# Bounded everywhere a small model could run on: llama.cpp's grammar ignores minimum and
# maximum (so confidence is one of eleven values) and, without a maxLength, a model that
# never closes a string generates until its context is full.
_CONFIDENCE = {"type": "number", "enum": [round(n / 10, 1) for n in range(11)]}
_WORDS = {"type": "string", "minLength": 1, "maxLength": 600}
_REFS = {"type": "array", "items": {"type": "string", "maxLength": 80}, "maxItems": 8}


def position_schema(stances: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of a usable position (what `position_of` accepts, made strict): a
    server that takes it constrains a small model's answer to it."""
    return {
        "type": "object",
        "properties": {
            "stance": {"type": "string", "enum": list(stances)},
            "summary": _WORDS,
            "confidence": _CONFIDENCE,
            "evidence": _REFS,
        },
        "required": ["stance", "summary", "confidence", "evidence"],
    }


def verdict_schema(stances: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of a usable verdict (`verdict_of`)."""
    return {
        "type": "object",
        "properties": {
            "stance": {"type": "string", "enum": list(stances)},
            "decision": _WORDS,
            "confidence": _CONFIDENCE,
        },
        "required": ["stance", "decision", "confidence"],
    }


def position_of(agent: str, answer: Mapping[str, Any], stances: Sequence[str]) -> Position:
    """The position `answer` states, or InvalidAnswer saying what is wrong with it."""
    refs = answer.get("evidence", [])
    if isinstance(refs, str):
        refs = [refs]
    if not isinstance(refs, list) or not all(isinstance(r, str | int) for r in refs):
        raise InvalidAnswer("evidence must be a list of evidence refs")
    return Position(
        agent,
        _stance(answer.get("stance"), stances),
        _text(answer, "summary"),
        _confidence(answer.get("confidence")),
        tuple(str(r) for r in refs),
    )


def verdict_of(answer: Mapping[str, Any], stances: Sequence[str]) -> Verdict:
    return Verdict(
        _stance(answer.get("stance"), stances),
        _text(answer, "decision"),
        _confidence(answer.get("confidence")),
    )


def unanimous(positions: Sequence[Position]) -> bool:
    return len({p.stance for p in positions}) <= 1


def settled(before: Sequence[Position], after: Sequence[Position]) -> bool:
    """A round that changed nothing: every analyst kept stance, summary (stripped) and
    confidence (to 4 places)."""
    was = {p.agent: p for p in before}
    for p in after:
        old = was.get(p.agent)
        if (
            old is None
            or old.stance != p.stance
            or old.summary.strip() != p.summary.strip()
            or round(old.confidence, 4) != round(p.confidence, 4)
        ):
            return False
    return len(was) == len(after)


def dissent(positions: Sequence[Position], verdict: Verdict) -> list[Position]:
    return [p for p in positions if p.stance != verdict.stance]


def check_panel(panel: Sequence[Analyst], stances: Sequence[str], rounds: int) -> None:
    """ValueError, in words for the config's author, for a panel that cannot deliberate."""
    if not panel:
        raise ValueError("the panel is empty: name at least one analyst")
    names = [a.name for a in panel]
    if len(set(names)) != len(names):
        raise ValueError(f"two analysts share a name: {', '.join(names)}")
    if any(not n.strip() for n in names):
        raise ValueError("an analyst has an empty name")
    if len(stances) < 2 or len(set(stances)) != len(stances):
        raise ValueError("the stances must be at least two different words")
    if not 1 <= rounds <= MAX_ROUNDS:
        raise ValueError(f"rounds must be from 1 to {MAX_ROUNDS}, not {rounds}")
