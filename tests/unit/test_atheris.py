"""The atheris targets (tests/fuzz/atheris_targets.py), each for a bounded number of runs."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILDS = sys.platform == "linux" and platform.machine() == "x86_64"  # where atheris has wheels

pytestmark = pytest.mark.skipif(
    not BUILDS and os.environ.get("CI") != "true", reason="atheris has no wheel for this platform"
)


@pytest.mark.parametrize("target", ["body", "ledger", "mcp-args", "lines"])
def test_the_target_survives_coverage_guided_fuzzing(target: str, tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.fuzz.atheris_targets",
            target,
            "-runs=20000",
            "-seed=12",
            "-max_len=2048",
            f"-artifact_prefix={tmp_path}/",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Done 20000 runs" in run.stderr
