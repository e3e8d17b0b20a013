"""Decisions as ledger records (../shared/specs/decision-record.md), and who may read them.

The record's own fields follow the format; what only Caucus needs (which form, who asked, the
audience, the raw answers) sits under one extra key, `caucus`, which the format allows and the
hash covers. `caucus.audience` is what scopes a decision: `all` is everyone's, `#channel` its
members'; a record without one is the operator's alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from caucus.domain.forms import Form, FormState, answer_lines
from caucus.domain.messages import SystemSender
from caucus.domain.names import BROADCAST

SCHEMA_VERSION = "0.1"


@dataclass(frozen=True, slots=True)
class Decision:
    """One ledger record as read back: the format's fields, and any others it carries (the
    format allows them and the hash covers them)."""

    record: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class LedgerBreak:
    index: int
    reason: str


@dataclass(frozen=True, slots=True)
class LedgerRecovery:
    """A lagging head checkpoint moved, without a person, over records the hub had noted."""

    from_count: int
    to_count: int
    at: float


@dataclass(frozen=True, slots=True)
class LedgerStatus:
    """Whether the decision ledger verifies now, and why the hub records nothing if it does not."""

    path: str
    records: int  # verified (before the break, if there is one)
    intact: bool
    anchored: bool  # a head checkpoint matches, so a truncated tail would be caught
    head_hash: str
    broken: LedgerBreak | None
    unrecorded_error: str | None
    recovered: LedgerRecovery | None = None  # the checkpoint moved over this hub's records


def iso_utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


def form_decision(form: Form) -> dict[str, Any]:
    """The ledger record of a settled form: the operator's answer is the decision, and a
    cancellation is one too (the operator declined to answer). An approval's record carries
    the call's canonical text, the very text its approve option's digest covers."""
    canceled = form.state is FormState.CANCELED
    if canceled:
        stance = "canceled"
        summary = f"canceled the form {form.asker} asked"
        verdict = f"canceled: {form.reason}" if form.reason else "canceled"
    else:
        lines = answer_lines(form)
        stance = "answered"
        summary = f"answered the form {form.asker} asked"
        verdict = "; ".join(lines) if lines else "answered with no field filled in"
    extra: dict[str, Any] = {
        "kind": "form",
        "form_id": form.id,
        "asker": form.asker,
        "audience": form.audience,
        "asked_at": iso_utc(form.created_at),
        "state": form.state.value,
        "fields": [f.record() for f in form.fields],
        "answers": form.answer or {},
    }
    if canceled:
        extra["reason"] = form.reason
    if form.call is not None:
        extra["call"] = {"canonical": form.call.canonical(), "sha256": form.call.digest()}
    return {
        "schema_version": SCHEMA_VERSION,
        "timestamp": iso_utc(form.updated_at),
        "subject": form.title,
        "positions": [
            {
                "agent": SystemSender.OPERATOR.value,
                "stance": stance,
                "summary": summary,
                "confidence": 1.0,
            }
        ],
        "decision": verdict,
        "dissent": [],
        "confidence": 1.0,
        "evidence": [{"source": "caucus-form", "ref": form.id}],
        "caucus": extra,
    }


def audience_of(record: dict[str, Any]) -> str | None:
    extra = record.get("caucus")
    audience = extra.get("audience") if isinstance(extra, dict) else None
    return audience if isinstance(audience, str) else None


def form_id_of(record: dict[str, Any]) -> str | None:
    extra = record.get("caucus")
    form_id = extra.get("form_id") if isinstance(extra, dict) else None
    return form_id if isinstance(form_id, str) else None


def visible_to(record: dict[str, Any], channels: frozenset[str] | None) -> bool:
    """Whether a peer in `channels` may read the record; None is the operator, who reads all."""
    if channels is None:
        return True
    audience = audience_of(record)
    return audience == BROADCAST or (audience is not None and audience in channels)
