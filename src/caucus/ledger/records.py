"""A decision record as a type, checked before it is written.

The ledger's verifier refuses a chain at its first bad record, and a writer refuses to append
to a chain that fails: so one record written with a missing field or a confidence of `True`
would stop every later decision. Every append therefore checks each sealed record against the
same rules the verifier applies (`verify.check_record`) before a byte reaches the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NoReturn

from caucus.errors import InvalidRequest
from caucus.ledger.canonical import encode, seal
from caucus.ledger.verify import REQUIRED, check_record


@dataclass(frozen=True, slots=True)
class RecordedPosition:
    """One analyst's position as the format holds it (`evidence` is this format's extra key:
    the refs the position rests on)."""

    agent: str
    stance: str
    summary: str
    confidence: float
    evidence: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "agent": self.agent,
            "stance": self.stance,
            "summary": self.summary,
            "confidence": float(self.confidence),
        }
        if self.evidence:
            out["evidence"] = list(self.evidence)
        return out


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """What was decided, before it is chained: schema 0.2 exactly when there were rounds."""

    subject: str
    decision: str
    confidence: float
    positions: Sequence[RecordedPosition]
    dissent: Sequence[RecordedPosition] = ()
    evidence: Sequence[Mapping[str, Any]] = ()
    rounds: Sequence[Sequence[RecordedPosition]] = ()  # kept only when more than one
    timestamp: datetime | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self, *, now: datetime | None = None) -> dict[str, Any]:
        moment = self.timestamp or now or datetime.now(UTC)
        out: dict[str, Any] = dict(self.extra)
        out |= {
            "schema_version": "0.2" if len(self.rounds) > 1 else "0.1",
            "timestamp": moment.astimezone(UTC).isoformat(),
            "subject": self.subject,
            "positions": [p.to_dict() for p in self.positions],
            "decision": self.decision,
            "dissent": [p.to_dict() for p in self.dissent],
            "confidence": float(self.confidence),
            "evidence": [dict(e) for e in self.evidence],
        }
        if len(self.rounds) > 1:
            out["rounds"] = [[p.to_dict() for p in r] for r in self.rounds]
        return out


def problem(sealed: Mapping[str, Any]) -> str | None:
    """Why `sealed` (a record with its hashes) would not verify, or None."""
    missing = [f for f in REQUIRED if f not in sealed]
    if missing:
        return f"malformed record: missing {', '.join(missing)}"
    try:
        encode(dict(sealed))
    except (ValueError, TypeError) as exc:
        return f"malformed record: {exc}"
    return check_record(dict(sealed))


def seal_checked(record: Mapping[str, Any], prev_hash: str) -> dict[str, Any]:
    """`record` chained after `prev_hash`, or InvalidRequest if it would not verify."""
    try:
        sealed = seal(record, prev_hash)
    except (ValueError, TypeError) as exc:
        _refuse(f"malformed record: {exc}")
    reason = problem(sealed)
    if reason is not None:
        _refuse(reason)
    return sealed


def _refuse(reason: str) -> NoReturn:
    raise InvalidRequest(
        f"refusing to append a decision record that would not verify ({reason}); the "
        "ledger is unchanged",
        field="record",
    )
