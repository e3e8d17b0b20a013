"""Tests wait on conditions, never for a window (issue 29): no test calls a sleep of its own.
`tests/waiting.py` polls in its waits, and a process a test starts may sleep in its script
(a string, not a call of the test's); a zero sleep only gives way to other tasks."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
POLLERS = {TESTS / "waiting.py", TESTS / "processes.py"}


def sleeps(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr != "sleep":
            continue
        arg = node.args[0] if node.args else None
        if isinstance(arg, ast.Constant) and arg.value == 0:
            continue
        found.append(f"{path.relative_to(TESTS.parent)}:{node.lineno}")
    return found


def test_no_test_sleeps_to_wait() -> None:
    files = [p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts]
    assert len(files) > 100
    found = [hit for path in files if path not in POLLERS for hit in sleeps(path)]
    assert found == []


SERVICES = TESTS.parent / "src" / "caucus" / "services"


def test_services_wait_on_events_not_timers() -> None:
    """Issue 32: a service waits for what it needs (a wake-up, an event, a future), never a
    poll on a timer; the sleeps are the hub's maintenance tick, which is a schedule, and the
    loop watch's timer, whose lateness is what it measures (issue 53)."""
    found = {Path(hit.split(":")[0]).name for p in SERVICES.rglob("*.py") for hit in sleeps(p)}
    assert found == {"hub.py", "loop_watch.py"}
