"""The chaos tier: 50 SIGKILL cycles under mixed load (benchmarks/chaos.py), and a checker
that finds nothing acknowledged lost, nothing phantom, every redelivery flagged, order per
sender kept, the database intact after every kill and the ledger healed after every restart
without a person. The figures are printed; docs/reliability.md has a 1,000-cycle run's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import chaos

pytestmark = pytest.mark.slow

CYCLES = 50


async def test_fifty_kill_cycles_lose_nothing_and_halt_nothing(tmp_path: Path) -> None:
    report = await chaos.run(CYCLES, tmp_path, seed=12, progress=False)
    print("chaos:", json.dumps(report))
    assert report["cycles"] == CYCLES
    assert report["sends_acknowledged"] > CYCLES * 20  # the load really ran
    assert report["forms_answered"] > CYCLES
    failures = {key: report[key] for key in chaos.FAILURES if report[key]}
    assert not failures, (failures, report["ledger_failure_detail"])
