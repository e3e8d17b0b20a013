"""`./dev test` runs every stage even when one fails, reports them all with their times, and
exits non-zero if any failed (issue 29): its stage runner, sourced from the script itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"source {ROOT / 'dev'}\n{script}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def stage_lines(stderr: str) -> dict[str, str]:
    """The summary's lines, by stage name: the outcome and the time."""
    table = stderr.split("==> stages\n", 1)[1]
    return {line[2:46].strip(): line[46:].strip() for line in table.splitlines()}


def test_a_failed_stage_does_not_stop_the_ones_after_it(tmp_path: Path) -> None:
    done = tmp_path / "second-ran"
    result = run(
        f"""
        stage "lint" false
        stage "tests" touch {done}
        stage "postgres pass" true
        summary "$SECONDS"
        """
    )
    assert result.returncode == 1
    assert done.exists()  # the stage after the red one ran
    lines = stage_lines(result.stderr)
    assert lines["lint"].startswith("FAILED (1)")
    assert lines["tests"].startswith("ok")
    assert lines["postgres pass"].startswith("ok")
    assert lines["all"].startswith("FAILED")
    assert all(line.endswith("s") for line in lines.values())  # each with its time


def test_a_failing_step_fails_its_stage_and_stops_that_stage_only(tmp_path: Path) -> None:
    after = tmp_path / "after-the-failing-step"
    result = run(
        f"""
        steps() {{
          false
          touch {after}
        }}
        stage "set-up" steps
        stage "next" true
        summary "$SECONDS"
        """
    )
    assert result.returncode == 1
    assert not after.exists()  # errexit holds inside a stage
    lines = stage_lines(result.stderr)
    assert lines["set-up"].startswith("FAILED")
    assert lines["next"].startswith("ok")


def test_all_green_exits_zero() -> None:
    result = run('stage "one" true\nstage "two" true\nsummary "$SECONDS"')
    assert result.returncode == 0, result.stderr
    assert stage_lines(result.stderr)["all"].startswith("ok")


def test_dev_caucus_acts_in_the_callers_folder(tmp_path: Path) -> None:
    """`./dev caucus connect --scope project` writes the caller's project's config, not the
    checkout's (the environment is taken as installed: `./dev test` set it up)."""
    project = tmp_path / "project"
    project.mkdir()
    args = "connect claude --scope project --dry-run --json --hub http://127.0.0.1:9"
    result = subprocess.run(
        ["bash", "-c", f"source {ROOT / 'dev'}\nensure_env() {{ :; }}\nmain caucus {args}"],
        cwd=project,
        env={**os.environ, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["path"] == str(project / ".mcp.json")


def test_the_node_tools_live_outside_the_checkout_where_the_tests_look(tmp_path: Path) -> None:
    """`./dev` installs them into a cache folder per lock; tests/nodebin.py finds that folder
    by the same rule (a fresh clone on the machine reuses them)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CAUCUS_TEST_NODE_TOOLS", "CAUCUS_TEST_NODE_CACHE")
    }
    env["XDG_CACHE_HOME"] = str(tmp_path)
    found = subprocess.run(
        ["bash", "-c", f"cd {ROOT} && source ./dev && node_tools_dir"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    ).stdout.strip()
    assert found.startswith(f"{tmp_path}/caucus/node/")
    looked = subprocess.run(
        [sys.executable, "-c", "from tests.nodebin import BIN; print(BIN)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
        cwd=ROOT,
    ).stdout.strip()
    assert looked == f"{found}/node_modules/.bin"
    assert str(ROOT) not in found
