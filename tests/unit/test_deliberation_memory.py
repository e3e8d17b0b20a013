"""Reflection: Brier scores for the chair and each analyst against outcomes (a dissenter's
forecast is the opposite of its stance's), and memory notes that fade with a half-life."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from caucus.deliberation.memory import append_note, find_record, forecasts, notes, scores


def record(h: str, confidence: float, skeptic: float) -> dict[str, object]:
    return {
        "hash": h,
        "stance": "approve",
        "confidence": confidence,
        "positions": [
            {"agent": "advocate", "stance": "approve", "summary": "s", "confidence": 0.9},
            {"agent": "skeptic", "stance": "reject", "summary": "s", "confidence": skeptic},
        ],
    }


def test_a_dissenter_forecasts_the_opposite_of_the_verdict() -> None:
    said = dict(forecasts(record("a", 0.7, 0.8)))
    assert said == pytest.approx({"chair": 0.7, "advocate": 0.9, "skeptic": 0.2})


def test_brier_scores_reward_the_calibrated_and_punish_the_overconfident() -> None:
    records = [record("a", 0.7, 0.8), record("b", 0.6, 0.9), record("c", 0.5, 0.5)]
    found = {s.who: s for s in scores(records, {"a": 1.0, "b": 0.0})}
    assert found["chair"].brier == pytest.approx(((0.7 - 1) ** 2 + (0.6 - 0) ** 2) / 2)
    assert found["skeptic"].brier == pytest.approx(((0.2 - 1) ** 2 + (0.1 - 0) ** 2) / 2)
    assert found["advocate"].decisions == 2  # c has no outcome yet


def test_notes_fade_with_their_half_life_and_the_faded_are_not_read(tmp_path: Path) -> None:
    memory = tmp_path / "memory.md"
    append_note(memory, date(2026, 1, 1), "- old lesson")
    append_note(memory, date(2026, 11, 2), "- recent lesson")
    append_note(memory, date(2026, 12, 2), "- fresh lesson")
    found = notes(memory, date(2026, 12, 2), half_life_days=30)
    assert [n["note"] for n in found] == ["- fresh lesson", "- recent lesson"]
    assert found[0]["weight"] == 1.0
    assert found[1]["weight"] == pytest.approx(0.5, abs=0.01)
    assert found[0]["source"] == "memory"
    assert found[0]["ref"] == "memory.md#2026-12-02"


def test_a_record_is_found_by_index_or_hash_prefix() -> None:
    records = [{"hash": "abcdef0123"}, {"hash": "abcdff9999"}]
    assert find_record(records, "1") is records[1]
    assert find_record(records, "abcdef") is records[0]
    with pytest.raises(LookupError, match="give more digits"):
        find_record(records, "abcd")
    with pytest.raises(LookupError, match="no record 5"):
        find_record(records, "5")
