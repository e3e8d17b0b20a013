"""Time is injected (issue 49): a rule that depends on time (TTLs, visibility timeouts, token
buckets, reaping, leases, retention, expiry, a watcher's gap, an agent's loop window) reads
the clock its owner was given (`caucus.clock`), which a test drives (`FakeClock`). A read of
the machine's own clocks anywhere else is listed here with why no rule's outcome rides on it:
a wait (how long a call parks, which never changes what it answers), a measure shown to a
person, or a stamp written down. A new read fails this test until it is one of those."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "caucus"
OWN = {"clock.py"}  # the clock itself
CLOCKS = {
    ("time", "time"),
    ("time", "monotonic"),
    ("time", "perf_counter"),
    ("time", "time_ns"),
    ("time", "monotonic_ns"),
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("loop", "time"),
    ("get_running_loop", "time"),
    ("get_event_loop", "time"),
}
WAIT = "a wait: how long a call parks or paces, never what it answers"
SHOWN = "a measure or an age shown to a person or a model"
STAMP = "a stamp written down with a record or a log line"
NOT_RULES = {
    "api/mcp/sdk.py:__exit__": WAIT + " (the MCP SDK's idle deadline, on its clock)",
    "cli/db_import.py:__call__": SHOWN + " (how often the import says how far it is)",
    "cli/db_import.py:__init__": SHOWN + " (how often the import says how far it is)",
    "cli/guard.py:_refuse": SHOWN,
    "client_base.py:wait_ready": WAIT,
    "dashboard/routes.py:stream": WAIT + " (the feed's health tick)",
    "cli/intents.py:outcome": STAMP,
    "ledger/chain.py:_recover": STAMP,
    "ledger/chain.py:anchor": STAMP,
    "ledger/records.py:to_dict": STAMP,
    "ledger/signing.py:sign": STAMP,
    "models/envelope.py:one_line": SHOWN,
    "mcp/front.py:_run": WAIT + " (how long a refusing hub has to come up: no hub, no clock)",
    "models/envelope.py:wrap": SHOWN,
    "mcp/renderings.py:catch_up_text": SHOWN,
    "mcp/renderings.py:reservations_text": SHOWN,
    "mcp/renderings.py:tasks_text": SHOWN,
    "mcp/server.py:run_tool": SHOWN,
    "mcp/watch.py:next_batch": WAIT + " (how long a watcher retries an absent hub)",
    "runtime/session/claude.py:_now": STAMP,
    "runtime/session/logger.py:__call__": STAMP,
    "runtime/session/logger.py:answered": SHOWN,
    "runtime/session/logger.py:called": SHOWN,
    "runtime/stdio.py:format": STAMP,
    "runtime/tools/codemode.py:call_tool": SHOWN,
    "services/delivery.py:peek": WAIT,
    "services/delivery.py:_parking": WAIT,
    "services/delivery.py:_listen": WAIT,
    "services/loop_watch.py:_watch": SHOWN + " (how late the event loop ran, for the operator)",
    "testing/postgres.py:fresh_database": STAMP + " (a unique database name)",
    "web/shield.py:wait": WAIT + " (strangers' pace)",
}


def _base(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr  # asyncio.get_running_loop().time()
    return None


def clock_reads(source: str, module: str) -> set[str]:
    """`module:function` of every read of a machine clock in `source`."""
    found: set[str] = set()

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = function
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = child.name
            func = child.func if isinstance(child, ast.Call) else None
            if isinstance(func, ast.Attribute) and (_base(func.value), func.attr) in CLOCKS:
                found.add(f"{module}:{inner}")
            visit(child, inner)

    visit(ast.parse(source), "<module>")
    return found


def test_rules_read_the_injected_clock_and_every_other_read_says_why() -> None:
    reads = {
        where
        for path in SRC.rglob("*.py")
        if str(path.relative_to(SRC)) not in OWN
        for where in clock_reads(path.read_text("utf-8"), str(path.relative_to(SRC)))
    }
    unexplained = sorted(reads - NOT_RULES.keys())
    assert unexplained == [], "read the injected clock (caucus.clock), or say why not here"
    assert sorted(NOT_RULES.keys() - reads) == [], "listed but gone: take it off the list"


def test_the_scan_sees_each_kind_of_read() -> None:
    """The scan is not blind: each way of reading a clock is found."""
    sample = (
        "import asyncio, time\nfrom datetime import datetime\n"
        "def a():\n    return time.time()\n"
        "def b():\n    return time.monotonic()\n"
        "def c():\n    return datetime.now()\n"
        "async def d():\n    loop = asyncio.get_running_loop()\n    return loop.time()\n"
        "async def e():\n    return asyncio.get_running_loop().time()\n"
        "def f():\n    return clock.now()\n"
    )
    assert clock_reads(sample, "m.py") == {f"m.py:{f}" for f in "abcde"}
