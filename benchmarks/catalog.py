"""What the tool catalog costs a model, per tool and in all, before and after, in one run.

A host sends the whole `tools/list` to its model on every turn, so its size is a per-turn
cost. This prints, for Caucus's catalog as each transport serves it now (the stdio bridge,
`/mcp` in a session, `/mcp` for a 2026-07-28 client, where every tool also takes a `handle`),
its size in characters (compact JSON as the wire carries it, and `json.dumps` with spaces) and
in tokens of OpenAI's o200k_base (`bpe-openai`, which ships the encoding: installed once,
outside the checkout, under ~/.cache/caucus/bench); then, tool by tool, the catalog a host
with output schemas reads, beside the one recorded at `--before` (default 7bd1b70, where issue
50 measured 28,534 characters; the snapshot `mcp/front.json` of that commit, filled with the
same limits). With `--baseline`, also the 19-tool catalog of caucus-mcp 5.1.0, installed from
PyPI into its own environment. The bar (12,000 compact characters for a session's listing) is
a test (tests/interaction/test_mcp_catalog.py); this prints the figures.

Run: `.venv/bin/python benchmarks/catalog.py` (`--before REF`, `--baseline`).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from caucus.mcp.listing import fill_tools, listing_values
from caucus.testing import make_hub, serve

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "caucus" / "bench"
TOKENIZER = "bpe-openai==0.1.4"
BASELINE = "caucus-mcp==5.1.0"
BEFORE = "7bd1b70"
Counter = Callable[[str], int]


def tokenizer() -> Counter:
    """o200k_base's token count, from `bpe-openai` installed once under the bench cache."""
    target = CACHE / "bpe-openai-0.1.4"
    if not (target / ".installed").exists():
        print(f"installing {TOKENIZER} into {target} (once)...", file=sys.stderr, flush=True)
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "--target", str(target), TOKENIZER], check=True)
        (target / ".installed").write_text(TOKENIZER)
    sys.path.insert(0, str(target))
    import bpe_openai

    encoding = bpe_openai.get_encoding("o200k_base")
    return lambda text: len(encoding.encode(text))


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def listed(client: Client) -> list[dict[str, Any]]:
    result = await client.list_tools()
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]


async def caucus_tools() -> dict[str, list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory() as folder:
        async with make_hub(folder) as hub, serve(hub) as url:
            found: dict[str, list[dict[str, Any]]] = {}
            env = {**os.environ, "CAUCUS_HUB": url, "XDG_RUNTIME_DIR": folder}
            env["XDG_STATE_HOME"] = folder
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


def recorded(ref: str | None) -> list[dict[str, Any]]:
    """The plain catalog of `mcp/front.json` at `ref` (None: the working tree), filled."""
    if ref is None:
        text = (ROOT / "src/caucus/mcp/front.json").read_text()
    else:
        show = ["git", "-C", str(ROOT), "show", f"{ref}:src/caucus/mcp/front.json"]
        text = subprocess.run(show, capture_output=True, text=True, check=True).stdout
    front = json.loads(text)
    return fill_tools(front["tools"]["plain"], listing_values(front["limits"], None))


def baseline_python() -> Path:
    """caucus-mcp's own interpreter (its package is also `caucus`, on the MCP SDK 1.x)."""
    home = CACHE / "caucus-mcp-5.1.0"
    python = home / "bin" / "python"
    if not (home / ".installed").exists():
        print(f"installing {BASELINE} into {home} (once)...", file=sys.stderr, flush=True)
        venv.create(home, with_pip=True, clear=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, BASELINE], check=True)
        (home / ".installed").write_text(BASELINE)
    return python


async def baseline_tools() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "CAUCUS_HUB_URL": "http://127.0.0.1:9"}
        params = StdioServerParameters(
            command=str(baseline_python()), args=["-m", "caucus.mcp_bridge"], env=env, cwd=home
        )
        async with Client(params, mode="legacy") as client:
            return await listed(client)


def totals(name: str, tools: list[dict[str, Any]], count: Counter, base: int) -> None:
    size = len(compact(tools))
    print(
        f"{name:26} {len(tools):>5} {size:>8} {len(json.dumps(tools)):>8} "
        f"{count(compact(tools)):>7} {size / base:>8.2f}"
    )


def per_tool(before: list[dict[str, Any]], after: list[dict[str, Any]], count: Counter) -> None:
    old = {t["name"]: t for t in before}
    print(f"\n{'tool':18} {'chars before':>12} {'after':>7} {'tokens before':>14} {'after':>7}")
    for tool in after:
        then = old.get(tool["name"])
        was = (len(compact(then)), count(compact(then))) if then else (0, 0)
        now = (len(compact(tool)), count(compact(tool)))
        print(f"{tool['name']:18} {was[0]:>12} {now[0]:>7} {was[1]:>14} {now[1]:>7}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with")
    parser.add_argument("--baseline", action="store_true", help="also caucus-mcp 5.1.0")
    args = parser.parse_args()
    count = tokenizer()
    before = recorded(args.before)
    base = len(compact(before))
    print(
        f"{'catalog':26} {'tools':>5} {'compact':>8} {'spaced':>8} {'tokens':>7} {'vs before':>8}"
    )
    totals(f"before ({args.before})", before, count, base)
    if args.baseline:
        totals(BASELINE, await baseline_tools(), count, base)
    live = await caucus_tools()
    for name, tools in live.items():
        totals(name, tools, count, base)
    per_tool(before, live["/mcp, session"], count)


if __name__ == "__main__":
    asyncio.run(main())
