"""A record is checked before it is written: a bad one is refused and the ledger stays
appendable; the typed record writes what verifies; the ledger imports without fcntl."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from caucus.errors import InvalidRequest
from caucus.ledger.chain import Ledger, append
from caucus.ledger.records import DecisionRecord, RecordedPosition
from caucus.ledger.verify import verify_chain

GOOD: dict[str, Any] = {
    "schema_version": "0.1",
    "timestamp": "2026-07-11T00:00:00+00:00",
    "subject": "Ship?",
    "positions": [{"agent": "a1", "stance": "yes", "summary": "ready", "confidence": 1.0}],
    "decision": "yes",
    "dissent": [],
    "confidence": 0.8,
    "evidence": [{"source": "spec", "ref": "SPEC.md"}],
}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"schema_version": None}, "missing schema_version"),
        ({"timestamp": None}, "missing timestamp"),
        ({"confidence": True}, "invalid confidence"),
        ({"timestamp": "2026-07-11T00:00:00"}, "timestamp not UTC"),
        ({"schema_version": "0.2"}, "schema 0.2 requires rounds"),
        ({"evidence": [{"source": "x"}]}, "invalid evidence entry"),
        ({"confidence": float("nan")}, "malformed record"),
        ({"subject": "\ud800"}, "lone surrogate"),
    ],
)
def test_a_record_that_would_not_verify_is_refused_and_later_appends_still_work(
    tmp_path: Path, change: dict[str, Any], reason: str
) -> None:
    log = tmp_path / "decisions.jsonl"
    append(log, GOOD)
    bad = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(InvalidRequest, match=reason):
        append(log, bad)
    append(log, GOOD)
    report, _ = verify_chain(log)
    assert report.intact
    assert report.count == 2


def test_the_typed_record_writes_schema_0_2_only_with_rounds(tmp_path: Path) -> None:
    a = RecordedPosition("advocate", "approve", "go", 0.9, ("r1",))
    b = RecordedPosition("skeptic", "reject", "wait", 0.4)
    moment = datetime(2026, 12, 2, tzinfo=UTC)
    one = DecisionRecord(
        "S", "go", 0.7, [a, b], [b], [{"source": "s", "ref": "r1"}], timestamp=moment
    )
    two = DecisionRecord("S", "go", 0.7, [a, b], [b], rounds=[[a, b], [a, b]], timestamp=moment)
    ledger = Ledger(tmp_path / "d.jsonl")
    _, first = ledger.record(one)
    _, second = ledger.record(two)
    assert first["schema_version"] == "0.1"
    assert "rounds" not in first
    assert second["schema_version"] == "0.2"
    assert len(second["rounds"]) == 2
    assert first["timestamp"] == "2026-12-02T00:00:00+00:00"
    assert first["positions"][0]["evidence"] == ["r1"]
    assert "evidence" not in first["dissent"][0]
    assert verify_chain(tmp_path / "d.jsonl")[0].intact


def test_the_ledger_imports_and_verifies_where_there_is_no_fcntl(tmp_path: Path) -> None:
    log = tmp_path / "d.jsonl"
    append(log, GOOD)
    code = (
        "import sys; sys.modules['fcntl'] = None\n"
        "from pathlib import Path\n"
        "import caucus.ledger.chain, caucus.ledger.commands\n"
        "from caucus.ledger.verify import verify_chain\n"
        f"print(verify_chain(Path({str(log)!r}))[0].count)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
