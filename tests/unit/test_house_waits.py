"""No test waits a fixed time for its verdict (issue 49): it waits for the condition (tests/
waiting.py polls for one, bounded) or asserts a negative by a signal the hub gives. A sleep in
a test's own code, or Playwright's `wait_for_timeout`, fails this test; the polling helpers
are the one place a pause between two looks belongs."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
POLLERS = {"waiting.py", "processes.py"}  # between two looks at a condition, never a verdict
SLEEPS = {("asyncio", "sleep"), ("time", "sleep"), ("page", "wait_for_timeout")}


def fixed_waits(source: str) -> list[int]:
    """Lines that pause for a fixed time (a zero sleep only yields, and is no wait)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        base = node.func.value
        owner = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
        if (owner, node.func.attr) not in SLEEPS and node.func.attr != "wait_for_timeout":
            continue
        zero = node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0
        if not zero:
            found.append(node.lineno)
    return sorted(found)


def test_no_test_waits_a_fixed_time() -> None:
    waits = {
        f"{path.relative_to(TESTS)}:{line}"
        for path in TESTS.rglob("*.py")
        if "node_modules" not in path.parts and path.name not in POLLERS
        for line in fixed_waits(path.read_text("utf-8"))
    }
    assert sorted(waits) == []


def test_the_scan_sees_a_fixed_wait() -> None:
    sample = (
        "async def t(page):\n    await asyncio.sleep(0.5)\n    time.sleep(1)\n"
        "    await page.wait_for_timeout(500)\n    await asyncio.sleep(0)\n"
    )
    assert fixed_waits(sample) == [2, 3, 4]
