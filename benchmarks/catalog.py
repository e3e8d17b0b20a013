"""What the tool catalog costs a model, beside a published hub's catalog, in one run.

A host sends the whole `tools/list` to its model on every turn, so its size is a per-turn
token cost. This prints, for Caucus's catalog as each transport serves it (the stdio bridge,
`/mcp` in a session, `/mcp` for a 2026-07-28 client, where every tool also takes a `handle`):
the number of tools, its size in characters (as `json.dumps` writes it, and compact as the
wire carries it), an estimated token count (characters / 4), and the ratio to the baseline:
the 19-tool catalog of caucus-mcp 5.1.0, read from its published package. caucus-mcp is
installed from PyPI into its own virtual environment under `.cache/` (once), started over
stdio, and listed with the same official MCP client. Before its output schemas, Caucus's own
catalog was 17,099 characters (31 tools, 2026-12-01); the goal is to stay below that.

Run: `.venv/bin/python benchmarks/catalog.py` (`--no-baseline` skips caucus-mcp).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from caucus.testing import make_hub, serve

BEFORE = 17_099  # characters of tools/list before this catalog (31 tools, no output schemas)
BASELINE = "caucus-mcp==5.1.0"
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "bench" / "caucus-mcp-5.1.0"


def measure(tools: list[dict[str, Any]]) -> tuple[int, int, int]:
    spaced = len(json.dumps(tools))
    compact = len(json.dumps(tools, separators=(",", ":")))
    return spaced, compact, round(compact / 4)


def row(name: str, count: int, figures: tuple[int, int, int], ratio: str) -> None:
    spaced, compact, tokens = figures
    print(f"{name:24} {count:>5} {spaced:>7} {compact:>8} {tokens:>8} {ratio:>8}")


async def listed(client: Client) -> list[dict[str, Any]]:
    result = await client.list_tools()
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]


def baseline_python() -> Path:
    """caucus-mcp's own interpreter, installed on first use (its package is also `caucus`, and
    it needs the MCP SDK 1.x, so it cannot share this environment)."""
    python = CACHE / "bin" / "python"
    marker = CACHE / ".installed"
    if not marker.exists():
        print(f"installing {BASELINE} into {CACHE} (once)...", file=sys.stderr, flush=True)
        venv.create(CACHE, with_pip=True, clear=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, BASELINE], check=True)
        marker.write_text(BASELINE)
    return python


async def baseline_tools() -> list[dict[str, Any]]:
    python = baseline_python()
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "CAUCUS_HUB_URL": "http://127.0.0.1:9"}
        params = StdioServerParameters(
            command=str(python), args=["-m", "caucus.mcp_bridge"], env=env, cwd=home
        )
        async with Client(params, mode="legacy") as client:
            return await listed(client)


async def caucus_tools() -> dict[str, list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory() as folder:
        async with make_hub(folder) as hub, serve(hub) as url:
            found: dict[str, list[dict[str, Any]]] = {}
            env = {
                **os.environ,
                "CAUCUS_HUB": url,
                "XDG_RUNTIME_DIR": folder,
                "XDG_STATE_HOME": folder,
            }
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "caucus", "bridge"], env=env, cwd=folder
            )
            async with Client(params, mode="legacy") as bridge:
                found["bridge (stdio)"] = await listed(bridge)
            async with Client(f"{url}/mcp", mode="legacy") as session:
                found["/mcp, session"] = await listed(session)
            async with Client(f"{url}/mcp") as modern:
                found["/mcp, 2026-07-28"] = await listed(modern)
            return found


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-baseline", action="store_true", help="skip caucus-mcp")
    args = parser.parse_args()
    rows = await caucus_tools()
    base = None
    print(f"{'catalog':24} {'tools':>5} {'chars':>7} {'compact':>8} {'~tokens':>8} {'vs base':>8}")
    if not args.no_baseline:
        theirs = await baseline_tools()
        base = measure(theirs)
        row(f"{BASELINE} (base)", len(theirs), base, "1.00")
    for name, tools in rows.items():
        figures = measure(tools)
        row(name, len(tools), figures, f"{figures[0] / base[0]:.2f}" if base else "-")
    print(f"before this catalog: 31 tools, {BEFORE} chars (goal: below it, with output schemas)")
    worst = max(measure(t)[0] for t in rows.values())
    print(f"largest now: {worst} chars = {worst / BEFORE:.2f} of before")


if __name__ == "__main__":
    asyncio.run(main())
