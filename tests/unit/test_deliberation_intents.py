"""Intents: a pause set by date holds until that day and lifts on it, for every reader, with
nothing running in between; due dates follow the cadence; bad changes are named."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from caucus.deliberation.intents import Intent, IntentError, IntentStore, changed

DAY = date(2026, 12, 2)


def test_setting_paused_until_pauses_and_reaching_it_unpauses(tmp_path: Path) -> None:
    store = IntentStore(tmp_path / "i.db")
    store.add(Intent("latency", "reduce", "p99 < 25 ms", cadence_days=7))
    paused = store.update("latency", {"paused_until": "2026-12-10"}, DAY)
    assert (paused.status, paused.paused_until) == ("paused", date(2026, 12, 10))
    assert store.get("latency", date(2026, 12, 9)).status == "paused"
    lifted = store.get("latency", date(2026, 12, 10))
    assert (lifted.status, lifted.paused_until) == ("open", None)
    # Deterministic: the row still says paused; any reader on that day sees it open.
    assert IntentStore(tmp_path / "i.db").get("latency", date(2026, 12, 10)).status == "open"
    assert store.get("latency", date(2026, 12, 9)).status == "paused"


def test_an_intent_is_due_when_its_cadence_has_passed_since_it_was_last_acted_on() -> None:
    intent = Intent("docs", "improve", cadence_days=3, last_acted=date(2026, 12, 1))
    assert not intent.due(date(2026, 12, 3))
    assert intent.due(date(2026, 12, 4))
    assert Intent("new", "start").due(DAY)
    assert not changed(intent, {"status": "done"}).due(date(2027, 1, 1))


def test_reopening_by_hand_clears_the_pause_date() -> None:
    paused = changed(Intent("x", "up"), {"paused_until": "2027-01-01"})
    reopened = changed(paused, {"status": "open"})
    assert (reopened.status, reopened.paused_until) == ("open", None)


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"colour": "red"}, "no such intent field: colour"),
        ({"status": "asleep"}, "status must be one of open, paused, done"),
        ({"paused_until": "next week"}, "paused_until must be a date"),
        ({"cadence_days": 0}, "cadence_days must be at least 1"),
        ({"cadence_days": "often"}, "whole number"),
        ({"direction": " "}, "direction must not be empty"),
    ],
)
def test_a_change_an_intent_cannot_take_is_refused_with_the_reason(
    changes: dict[str, object], why: str
) -> None:
    with pytest.raises(IntentError, match=why):
        changed(Intent("x", "up"), changes)


def test_names_are_unique_and_unknown_names_say_how_to_list(tmp_path: Path) -> None:
    store = IntentStore(tmp_path / "i.db")
    store.add(Intent("x", "up"))
    with pytest.raises(IntentError, match="exists"):
        store.add(Intent("x", "down"))
    with pytest.raises(IntentError, match="caucus intents list"):
        store.update("y", {"target": "t"}, DAY)
    assert oct((tmp_path / "i.db").stat().st_mode & 0o777) == "0o600"
