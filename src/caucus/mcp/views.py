"""What a tool's structured content holds: a compact view of the wire noun the tool got.

The wire nouns (`caucus.wire`) carry everything a program may want, and HTTP, the console and
`HubClient` read them whole. A model reads a tool's result on every call, and some hosts hand
it the structured content instead of the text (ADR 0035), so a tool's result keeps the fields a
model acts on, under the nouns' own names: times in ISO 8601 (UTC, to the second), never a
null, and nothing empty inside a list's items. Each view declares its fields once; the tool's
output schema is built from the same declaration, so the two cannot drift. The schema types
every top-level field; what a list's items hold is in the protocol's `results` section, which
a model reads once instead of on every turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeAlias

from caucus.domain.messages import is_message_id
from caucus.models.envelope import visible

STRING, INTEGER, NUMBER, BOOLEAN, OBJECT = "string", "integer", "number", "boolean", "object"
STRINGS = "strings"  # a list of strings
TIME = "time"  # epoch seconds on the wire; ISO 8601 here
NAMES = "names"  # a list of named objects (skills): their names


@dataclass(frozen=True, slots=True)
class Items:
    """A list of wire nouns, each shown through `view`."""

    view: View


@dataclass(frozen=True, slots=True)
class Pick:
    """A field read from elsewhere in the noun (`path`, dotted), or computed by `read`."""

    kind: str | Items | View
    path: str | None = None
    read: Callable[[Any], Any] | None = None


Kind: TypeAlias = "str | Items | Pick | View"
_JSON = {STRING, INTEGER, NUMBER, BOOLEAN, OBJECT}


@dataclass(frozen=True, slots=True)
class View:
    fields: Mapping[str, Kind] = field(default_factory=dict)

    def schema(self) -> dict[str, Any]:
        """The output schema: every field typed; a list of nouns says its items are objects."""
        properties = {name: _schema(kind) for name, kind in self.fields.items()}
        return {"type": "object", "properties": properties}

    def of(self, noun: Any, *, item: bool = False) -> dict[str, Any]:
        """`noun` as this view shows it: no nulls; inside a list's items, no empty values."""
        shown: dict[str, Any] = {}
        for name, kind in self.fields.items():
            value = _shown(_read(noun, name, kind), kind)
            if value is None or (item and value in ("", [], {})):
                continue
            shown[name] = value
        return shown


def _schema(kind: Kind) -> dict[str, Any]:
    if isinstance(kind, Pick):
        return _schema(kind.kind)
    if isinstance(kind, Items):
        return {"type": "array"}
    if isinstance(kind, View):
        return {"type": "object"}
    if kind in (STRINGS, NAMES):
        return {"type": "array", "items": {"type": "string"}}
    if kind == TIME:
        return {"type": "string"}
    assert kind in _JSON, kind
    return {"type": kind}


def _read(noun: Any, name: str, kind: Kind) -> Any:
    if isinstance(kind, Pick):
        if kind.read is not None:
            return kind.read(noun)
        value = noun
        for step in (kind.path or name).split("."):
            value = _get(value, step)
        return value
    return _get(noun, name)


def _get(value: Any, name: str) -> Any:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _shown(value: Any, kind: Kind) -> Any:
    if value is None:
        return None
    if isinstance(kind, Pick):
        return _shown(value, kind.kind)
    if isinstance(kind, Items):
        return [kind.view.of(v, item=True) for v in value]
    if isinstance(kind, View):
        return kind.of(value, item=True)
    if kind == TIME:
        return iso(value)
    if kind == NAMES:
        return [_get(v, "name") for v in value]
    if kind == OBJECT and hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    return value


def iso(ts: float | str) -> str:
    """Epoch seconds as ISO 8601 in UTC, to the second (a string is already one)."""
    if isinstance(ts, str):
        return ts
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the views, one per result a tool gives ---------------------------------------------------
def _thread(m: Any) -> str | None:
    """A thread a person named; one a reply began is read as `reply_seq` instead."""
    thread = _get(m, "thread")
    return None if thread is None or is_message_id(thread) else visible(thread)


JOINED = View(
    {
        "name": STRING,
        "outcome": STRING,
        "handle": STRING,
        "protocol_version": INTEGER,
        "protocol": STRING,
        "note": STRING,
        "watch": STRING,
        "inbox": STRING,
        "catch_up": STRING,
    }
)
LEFT = View({"name": STRING})
WHO = View({"joined": BOOLEAN, "name": STRING, "default_name": STRING, "pending": INTEGER})
_PEER = View(
    {"name": STRING, "state": STRING, "status": STRING, "skills": NAMES, "paused": BOOLEAN}
)
PEERS = View({"peers": Items(_PEER)})
STATUS = View({"status": STRING})
SENT = View({"seq": INTEGER, "delivered_to": STRINGS, "missed": STRINGS, "notice": STRING})
_MESSAGE = View(
    {
        "seq": INTEGER,
        "id": STRING,
        "ts": TIME,
        "sender": STRING,
        "to": STRING,
        "kind": STRING,
        "content": STRING,
        "meta": OBJECT,
        "thread": Pick(STRING, read=_thread),
        "reply_seq": INTEGER,
        "reply_sender": STRING,
        "redelivered": BOOLEAN,
    }
)
HEARD = View({"messages": Items(_MESSAGE), "untrusted": STRING, "displaced_watcher": BOOLEAN})
WATCH = View({"command": STRING, "via": STRING, "how": STRING})
PUSH = View({"mode": STRING, "note": STRING})
PROTOCOL = View({"version": INTEGER, "section": STRING, "text": STRING})
_CHANNEL = View(
    {"name": STRING, "topic": STRING, "members": STRINGS, "private": BOOLEAN, "closed": BOOLEAN}
)
CHANNELS = View({"channels": Items(_CHANNEL)})
FLOOR = View({"scope": STRING, "holder": STRING, "since": TIME, "reason": STRING, "hands": STRINGS})
_TASK = View(
    {
        "task_id": STRING,
        "sender": STRING,
        "worker": STRING,
        "subject": STRING,
        "content": STRING,
        "state": STRING,
        "priority": INTEGER,
        "blocked": BOOLEAN,
        "blocked_by": STRINGS,
        "result": STRING,
        "error": STRING,
        "question": STRING,
        "answer": STRING,
        "updated_at": TIME,
    }
)
TASKS = View({"tasks": Items(_TASK)})
_CLAIM = View({"claimant": STRING, "note": STRING, "state": STRING})
_OFFER = View(
    {
        "offer_id": STRING,
        "poster": STRING,
        "subject": STRING,
        "content": STRING,
        "required_skills": NAMES,
        "state": STRING,
        "priority": INTEGER,
        "blocked": BOOLEAN,
        "blocked_by": STRINGS,
        "claims": Items(_CLAIM),
        "winner": STRING,
        "task_id": STRING,
        "expires_at": TIME,
    }
)
OFFERS = View({"offers": Items(_OFFER)})
_RESERVATION = View(
    {
        "reservation_id": STRING,
        "holder": STRING,
        "pattern": STRING,
        "exclusive": BOOLEAN,
        "reason": STRING,
        "expires_at": TIME,
    }
)
_CONFLICT = View(
    {"pattern": STRING, "holder": STRING, "held": STRING, "exclusive": BOOLEAN, "expires_at": TIME}
)
RESERVATIONS = View(
    {"reservations": Items(_RESERVATION), "conflicts": Items(_CONFLICT), "policy": STRING}
)
_HIT = View(
    {
        "kind": STRING,
        "seq": INTEGER,
        "id": STRING,
        "ts": TIME,
        "sender": STRING,
        "to": STRING,
        "thread": Pick(STRING, read=_thread),
        "task_id": STRING,
        "snippet": STRING,
    }
)
_DECISION_HIT = View(
    {"hash": STRING, "timestamp": STRING, "subject": STRING, "decision": STRING, "snippet": STRING}
)
_SUMMARY = View(
    {
        "thread": STRING,
        "summary": STRING,
        "messages": INTEGER,
        "participants": NAMES,
        "opening_seq": INTEGER,
        "latest_seq": INTEGER,
        "key_points": Items(View({"seq": INTEGER, "sender": STRING, "text": STRING})),
        "tasks": Items(View({"task_id": STRING, "state": STRING, "subject": STRING})),
    }
)
FOUND = View(
    {
        "hits": Pick(Items(_HIT), path="found.hits"),
        "decisions": Pick(Items(_DECISION_HIT), path="found.decisions"),
        "more": Pick(BOOLEAN, path="found.more"),
        "summary": _SUMMARY,
    }
)
_PROFILE = View({"name": STRING, "model": STRING, "description": STRING})
_TEAMMATE = View(
    {
        "spawn_id": STRING,
        "name": STRING,
        "profile": STRING,
        "state": STRING,
        "ended_by": STRING,
        "started_at": TIME,
    }
)
TEAMMATES = View(
    {
        "granted": BOOLEAN,
        "allowed": INTEGER,
        "running": INTEGER,
        "why_not": STRING,
        "profiles": Items(_PROFILE),
        "tools": STRINGS,
        "teammates": Items(_TEAMMATE),
    }
)
_FIELD = View({"key": STRING, "type": STRING, "label": STRING, "options": STRINGS})
_FORM = View(
    {
        "form_id": STRING,
        "asker": STRING,
        "title": STRING,
        "fields": Items(_FIELD),
        "to": STRING,
        "state": STRING,
        "answer": OBJECT,
        "reason": STRING,
        "decision_hash": STRING,
        "updated_at": TIME,
    }
)
FORMS = View({"forms": Items(_FORM)})
_DECISION = View(
    {
        "caucus": OBJECT,  # the hub's own: the form it answers, its audience
        "hash": STRING,
        "timestamp": STRING,
        "subject": STRING,
        "decision": STRING,
        "confidence": NUMBER,
    }
)
DECISIONS = View({"decisions": Items(_DECISION)})
CONVENED = View({"deliberation_id": STRING, "chair": STRING, "panel": STRINGS})
POSITION = View({"stance": STRING, "confidence": NUMBER})
