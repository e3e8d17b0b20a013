"""1,000 active agents on one hub (issue 53): each sends 2 messages a second to its partner,
which long-polls for them, so every message is a send and a woken receive of its own.

Starts `caucus hub` (a fresh SQLite file) with its loop watch at 2 ms and the bare endpoint of
`relay.py` beside it, then, `--reps` times: the agents for `--duration` seconds (their first
`--settle` seconds, while 2,000 fresh connections make their first requests, left out of the
latencies), and the bare endpoint at the same requests per second over as many connections.
It prints send -> receive p50/p99 (target: p99 <= 50 ms), the bare endpoint's, the hub's CPU
per message, the share of a core it used, and the worst stalls of its event loop during each
rep, with when they came (seconds after the messages began to flow: registering and connecting
are left out). Run: `.venv/bin/python benchmarks/active.py` (`--agents 1000 --reps 3
--duration 10`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import relay

TARGET_P99_MS = 50.0
TOKEN = "bench-operator-token-0123456789abcdef"  # noqa: S105 - a throwaway hub's
ENV = {**relay.BENCH_ENV, "CAUCUS_OPERATOR_TOKEN": TOKEN, "CAUCUS_LOOP_WATCH_INTERVAL": "0.002"}


async def stalls(url: str, began: float, ended: float) -> list[tuple[float, float]]:
    """The hub's loop stalls between two wall-clock times: (seconds into it, ms)."""
    host, port = relay.host_port(url)
    c = await relay.Conn(host, port, TOKEN).open()
    try:
        status, data = await c.request("GET", "/operator/upkeep")
        assert status == 200, data
        seen: list[dict[str, Any]] = json.loads(data)["stalls"]
    finally:
        c.close()
    return sorted((s["at"] - began, s["ms"]) for s in seen if began <= s["at"] <= ended)


async def rep(
    url: str, bare_url: str, pid: int, args: argparse.Namespace, n: int
) -> dict[str, Any]:
    agents = args.agents
    marks: list[float] = []  # when the messages start to flow, and when they end
    result = await relay.relay_run(
        url,
        agents,
        args.duration,
        2.0 * agents,
        100 + n,
        pid=pid,
        settle=args.settle,
        window=lambda: marks.append(time.time()),
    )
    held = await stalls(url, marks[0], marks[-1])
    bare = await relay.trivial_run(bare_url, 2 * agents, args.duration, 4.0 * agents)
    return {
        "p50_ms": result.pct(50),
        "p99_ms": result.pct(99),
        "p99_with_first_ms": result.pct(99, settling=True),
        "bare_p50_ms": bare.pct(50),
        "bare_p99_ms": bare.pct(99),
        "cpu_us": result.cpu_us,
        "core_share": result.cpu_us * 2.0 * agents / 1e6,
        "messages": result.count,
        "worst_stalls": sorted(held, key=lambda s: -s[1])[:5],
        "flowed_at": marks[0],
    }


async def measure(
    args: argparse.Namespace, url: str, bare_url: str, pid: int
) -> list[dict[str, Any]]:
    print(f"warming up ({args.agents} agents)...", file=sys.stderr)
    await relay.relay_run(url, args.agents, 2.0, 2.0 * args.agents, 0)
    reps = []
    for n in range(args.reps):
        print(f"rep {n + 1}/{args.reps}: {args.agents} agents x 2 msgs/s...", file=sys.stderr)
        reps.append(await rep(url, bare_url, pid, args, n))
    return reps


def report(args: argparse.Namespace, reps: list[dict[str, Any]]) -> None:
    p99s = [r["p99_ms"] for r in reps]
    print(f"\n{args.agents} agents sending 2 msgs/s each ({2 * args.agents} msgs/s)")
    for i, r in enumerate(reps, start=1):
        held = ", ".join(f"{ms:.0f} ms at {at:.1f} s" for at, ms in r["worst_stalls"]) or "none"
        print(
            f"  rep {i}: p50 {r['p50_ms']:6.1f} ms  p99 {r['p99_ms']:6.1f} ms (with the first "
            f"{args.settle:g} s: {r['p99_with_first_ms']:.1f})   bare p50 "
            f"{r['bare_p50_ms']:5.1f} p99 {r['bare_p99_ms']:5.1f}   hub {r['cpu_us']:4.0f} us/msg "
            f"({r['core_share']:.0%} of a core)   stalls: {held}"
        )
    p99 = relay.median(p99s)
    verdict = "meets" if p99 <= TARGET_P99_MS else "misses"
    print(f"p99 {p99:.1f} ms, the median of {len(reps)} reps ({verdict} {TARGET_P99_MS:g} ms)")
    print(json.dumps({"agents": args.agents, "p99_ms": round(p99, 1), "reps": reps}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000, help="sender/receiver pairs")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per rep")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds left out at first")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="caucus-active-") as folder:
        tmp = Path(folder)
        env = {**ENV, "CAUCUS_HOME": str(tmp)}
        hub, url = relay.start(relay.hub_command(tmp / "bench.db"), env)
        bare, bare_url = relay.start([sys.executable, relay.__file__, "--serve-trivial"])
        try:
            reps = asyncio.run(measure(args, url, bare_url, hub.pid))
        finally:
            relay.stop(hub)
            relay.stop(bare)
    report(args, reps)


if __name__ == "__main__":
    main()
