"""Intents: the standing goals a briefing deliberates against, kept in a small SQLite file.

An intent says where something should go (`direction`, `target`), how fast (`pacing`), and how
often to act on it (`cadence_days`, `last_acted`). Setting `paused_until` pauses it; the first
read on or after that day finds it open again, with nothing running in the background: the
state is a function of the stored row and the date asked about, so two readers on the same day
always agree. The same file keeps the outcomes of decisions (`memory.py`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from caucus.files import make_private, private_dir

STATUSES = ("open", "paused", "done")
FIELDS = ("direction", "target", "pacing", "cadence_days", "last_acted", "status", "paused_until")

SCHEMA = """
CREATE TABLE IF NOT EXISTS intents (
    name TEXT PRIMARY KEY,
    direction TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    pacing TEXT NOT NULL DEFAULT '',
    cadence_days INTEGER NOT NULL DEFAULT 7,
    last_acted TEXT,
    status TEXT NOT NULL DEFAULT 'open',
    paused_until TEXT
);
CREATE TABLE IF NOT EXISTS outcomes (
    record_hash TEXT PRIMARY KEY,
    result REAL NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    recorded_at TEXT NOT NULL
);
"""


class IntentError(ValueError):
    """A change that cannot be made; the message says why."""


@dataclass(frozen=True, slots=True)
class Intent:
    name: str
    direction: str
    target: str = ""
    pacing: str = ""
    cadence_days: int = 7
    last_acted: date | None = None
    status: str = "open"
    paused_until: date | None = None

    def on(self, today: date) -> Intent:
        """This intent as of `today`: a pause whose day has come is over."""
        if self.status == "paused" and self.paused_until is not None and today >= self.paused_until:
            return replace(self, status="open", paused_until=None)
        return self

    def due(self, today: date) -> bool:
        if self.status != "open":
            return False
        return self.last_acted is None or today >= self.last_acted + timedelta(
            days=self.cadence_days
        )

    def wire(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("last_acted", "paused_until"):
            out[key] = out[key].isoformat() if out[key] is not None else None
        return out

    def evidence(self, today: date) -> dict[str, Any]:
        """As an evidence item for a deliberation."""
        return {
            "source": "intents",
            "ref": f"intent:{self.name}",
            **self.wire(),
            "due": self.due(today),
        }


def _day(value: Any, key: str) -> date | None:
    if value in (None, ""):
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise IntentError(f"{key} must be a date (YYYY-MM-DD), not {value!r}") from None


def changed(intent: Intent, changes: Mapping[str, Any]) -> Intent:
    """`intent` with `changes` applied and checked: setting `paused_until` pauses it, and
    un-pausing by hand clears the date."""
    unknown = set(changes) - set(FIELDS)
    if unknown:
        raise IntentError(f"no such intent field: {', '.join(sorted(unknown))}")
    values: dict[str, Any] = dict(changes)
    for key in ("last_acted", "paused_until"):
        if key in values:
            values[key] = _day(values[key], key)
    if "cadence_days" in values:
        try:
            values["cadence_days"] = int(values["cadence_days"])
        except (TypeError, ValueError):
            raise IntentError("cadence_days must be a whole number of days") from None
        if values["cadence_days"] < 1:
            raise IntentError("cadence_days must be at least 1")
    if "status" in values and values["status"] not in STATUSES:
        raise IntentError(f"status must be one of {', '.join(STATUSES)}")
    for key in ("direction", "target", "pacing"):
        if key in values and not isinstance(values[key], str):
            raise IntentError(f"{key} must be text")
    result = replace(intent, **values)
    if values.get("paused_until") is not None:
        result = replace(result, status="paused")
    elif values.get("status") in ("open", "done"):
        result = replace(result, paused_until=None)
    if not result.direction.strip():
        raise IntentError("direction must not be empty")
    return result


class IntentStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        private_dir(self.path.parent)
        fresh = not self.path.exists()
        db = sqlite3.connect(self.path)
        try:
            if fresh:
                make_private(self.path)
            db.executescript(SCHEMA)
            with db:
                yield db
        finally:
            db.close()

    @staticmethod
    def _row(row: tuple[Any, ...]) -> Intent:
        return Intent(
            row[0],
            row[1],
            row[2],
            row[3],
            int(row[4]),
            _day(row[5], "last_acted"),
            row[6],
            _day(row[7], "paused_until"),
        )

    def list(self, today: date) -> list[Intent]:
        with self._db() as db:
            rows = db.execute(
                "SELECT name, direction, target, pacing, cadence_days, last_acted, status, "
                "paused_until FROM intents ORDER BY name"
            ).fetchall()
        return [self._row(r).on(today) for r in rows]

    def get(self, name: str, today: date) -> Intent:
        for intent in self.list(today):
            if intent.name == name:
                return intent
        raise IntentError(f"no intent named {name!r}; `caucus intents list` shows them")

    def add(self, intent: Intent) -> Intent:
        checked = changed(intent, {})
        with self._db() as db:
            try:
                db.execute("INSERT INTO intents VALUES (?, ?, ?, ?, ?, ?, ?, ?)", _values(checked))
            except sqlite3.IntegrityError:
                raise IntentError(f"an intent named {intent.name!r} exists; update it") from None
        return checked

    def update(self, name: str, changes: Mapping[str, Any], today: date) -> Intent:
        new = changed(self.get(name, today), changes)
        with self._db() as db:
            db.execute(
                "UPDATE intents SET direction = ?, target = ?, pacing = ?, cadence_days = ?, "
                "last_acted = ?, status = ?, paused_until = ? WHERE name = ?",
                (*_values(new)[1:], name),
            )
        return new

    def record_outcome(self, record_hash: str, result: float, note: str, at: str) -> None:
        with self._db() as db:
            db.execute(
                "INSERT INTO outcomes VALUES (?, ?, ?, ?) ON CONFLICT (record_hash) DO UPDATE "
                "SET result = excluded.result, note = excluded.note, "
                "recorded_at = excluded.recorded_at",
                (record_hash, result, note, at),
            )

    def outcomes(self) -> dict[str, tuple[float, str, str]]:
        with self._db() as db:
            rows = db.execute("SELECT record_hash, result, note, recorded_at FROM outcomes")
            return {r[0]: (float(r[1]), r[2], r[3]) for r in rows.fetchall()}


def _values(i: Intent) -> tuple[Any, ...]:
    return (
        i.name,
        i.direction,
        i.target,
        i.pacing,
        i.cadence_days,
        i.last_acted.isoformat() if i.last_acted else None,
        i.status,
        i.paused_until.isoformat() if i.paused_until else None,
    )
