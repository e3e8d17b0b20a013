"""`caucus deliberate` on a real model: three analysts and a chair on Qwen2.5-Coder-0.5B behind
llama-cpp-python's OpenAI-compatible server, the record on a ledger that Caucus and the
independent verifier of the format both accept. A 0.5B model's opinions are not asserted,
only what the engine guarantees: a decision, its confidence, a record that verifies."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest

from tests import record_format
from tests.waiting import within

pytestmark = pytest.mark.llm


async def test_a_panel_on_the_real_model_decides_and_the_ledger_verifies(
    llm_url: str, tmp_path: Path
) -> None:
    (tmp_path / "evidence.json").write_text(
        json.dumps([{"source": "benchmarks", "ref": "scaleout.txt", "pg_vs_sqlite": 0.66}])
    )
    # JSON mode with each answer's schema: the server constrains every answer to a usable
    # position or verdict (a 0.5B model in plain JSON mode wrote evidence as objects).
    (tmp_path / "config.yaml").write_text(
        "log: d.jsonl\nmax_rounds: 1\n"
        f"backend: {{type: openai, model: qwen, base_url: '{llm_url}', json_mode: true, "
        "json_schema: true}\n"
    )
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "caucus", "deliberate"),
        "Should a small team move its shared deployment from SQLite to PostgreSQL?",
        *("--evidence", "evidence.json"),
        cwd=str(tmp_path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await within(proc.communicate(), 600, "caucus deliberate to decide")
    assert proc.returncode == 0, err.decode()[-3000:]
    lines = out.decode().splitlines()
    assert re.fullmatch(r"DECISION \(\d{1,3}% confidence\): .+", lines[0])
    assert re.fullmatch(r"On the record: d\.jsonl \(hash [0-9a-f]{12}…\)", lines[-1])
    assert "round 1: skeptic answered" in err.decode()

    ledger = tmp_path / "d.jsonl"
    assert record_format.verify(ledger) == (1, True)
    check = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "caucus", "verify", str(ledger), stdout=asyncio.subprocess.PIPE
    )
    said, _ = await check.communicate()
    assert check.returncode == 0
    assert "intact: 1 records, anchored" in said.decode()
    record = json.loads(ledger.read_text())
    assert [p["agent"] for p in record["positions"]] == ["advocate", "skeptic", "assessor"]
    assert record["evidence"][0]["ref"] == "scaleout.txt"
