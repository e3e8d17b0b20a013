"""Task round trips per second, beside the plain relay, over real HTTP, in the same run.

A round trip: the sender sends a task, the worker receives it (which claims it) and replies, and
the sender receives the result. Each of N sender/worker pairs runs round trips back to back
against `caucus hub` (SQLite, synchronous=FULL). The same hub then runs the plain relay
(`benchmarks/relay.py`'s closed loop) for comparison. Run: `.venv/bin/python benchmarks/tasks.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import relay

# Issue 33: a task round trip at 0.6x a relayed message (issue 14 asked 0.34, twice the ratio
# of 2026-11-30, once a task's transitions were one unit of work each: ADR 0015).
TARGET_RATIO = 0.6


async def task_round_trips(url: str, pairs: int, duration: float, run: int) -> relay.Result:
    host, port = relay.host_port(url)
    names = [(f"ts{run}-{i}", f"tw{run}-{i}") for i in range(pairs)]
    tokens = {n: await relay.register(url, n) for pair in names for n in pair}
    done = 0
    latencies: list[float] = []
    start = time.perf_counter()
    end = start + duration

    async def pair(sender: str, worker: str) -> None:
        nonlocal done
        s = await relay.Conn(host, port, tokens[sender]).open()
        w = await relay.Conn(host, port, tokens[worker]).open()
        s_ack = w_ack = None
        try:
            while time.perf_counter() < end:
                t0 = time.perf_counter()
                body = json.dumps({"to": worker, "payload": relay.PAD}).encode()
                status, data = await s.request("POST", "/tasks", body)
                assert status == 200, data
                task_id = json.loads(data)["task_id"]
                while True:  # the worker receives the task (and claims it)
                    path = "/receive?timeout=5" + (f"&ack={w_ack}" if w_ack else "")
                    status, data = await w.request("GET", path)
                    messages = json.loads(data)["messages"]
                    if messages:
                        w_ack = messages[-1]["seq"]
                        break
                reply = json.dumps({"result": "done"}).encode()
                status, data = await w.request("POST", f"/tasks/{task_id}/reply", reply)
                assert status == 200, data
                while True:  # the sender receives the result
                    path = "/receive?timeout=5" + (f"&ack={s_ack}" if s_ack else "")
                    status, data = await s.request("GET", path)
                    messages = json.loads(data)["messages"]
                    if messages:
                        s_ack = messages[-1]["seq"]
                        break
                if time.perf_counter() <= end:
                    done += 1
                    latencies.append((time.perf_counter() - t0) * 1000)
        finally:
            s.close()
            w.close()

    await asyncio.gather(*(pair(s, w) for s, w in names))
    return relay.Result(done / (time.perf_counter() - start), latencies)


async def measure(
    url: str, pairs: int, duration: float, rounds: int
) -> list[tuple[relay.Result, relay.Result]]:
    """`rounds` of (task round trips, then the relay), alternating on the same hub, so that a
    shared machine's slow minute lands on both sides of a ratio rather than on one."""
    await task_round_trips(url, pairs, 1.0, run=0)  # warm up
    await relay.relay_run(url, pairs, 1.0, None, run=100)
    measured = []
    for i in range(rounds):
        print(f"round {i + 1} of {rounds}...", file=sys.stderr)
        tasks = await task_round_trips(url, pairs, duration, run=1 + i)
        plain = await relay.relay_run(url, pairs, duration, None, run=101 + i)
        measured.append((tasks, plain))
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=32)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    parser.add_argument("--rounds", type=int, default=3, help="task/relay rounds (the median)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="caucus-tasks-"))
    env = {
        "CAUCUS_SEND_RATE_CAPACITY": "1000000",
        "CAUCUS_SEND_RATE_REFILL": "1000000",
        # A benchmark registers its agents from one address at once: the flood budgets
        # (issue 12) are for strangers, not for the load it measures.
        "CAUCUS_REGISTER_RATE_CAPACITY": "1000000",
        "CAUCUS_RESUME_RATE_CAPACITY": "1000000",
        "CAUCUS_STRANGER_RATE": "1000000",
        "CAUCUS_STRANGER_BURST": "1000000",
        # Each phase registers its own agents: a long run would fill the room (peers_max).
        "CAUCUS_PEERS_MAX": "1000000",
        "CAUCUS_LOG_LEVEL": "warning",
        "CAUCUS_HOME": str(tmp),
    }
    hub, url = relay.start(
        [
            sys.executable,
            "-m",
            "caucus",
            "hub",
            "--port",
            "0",
            "--json",
            "--db",
            str(tmp / "tasks.db"),
        ],
        env,
    )
    try:
        measured = asyncio.run(measure(url, args.pairs, args.duration, max(1, args.rounds)))
    finally:
        relay.stop(hub)
    ratios = [t.rate / p.rate for t, p in measured]
    tasks, plain = measured[ratios.index(statistics.median_low(ratios))]
    figures = {
        "pairs": args.pairs,
        "rounds": len(measured),
        "task_round_trips_per_s": round(tasks.rate),
        "task_p50_ms": round(tasks.pct(50), 2),
        "task_p99_ms": round(tasks.pct(99), 2),
        "relay_msgs_per_s": round(plain.rate),
        "ratio_to_relay": round(tasks.rate / plain.rate, 3),
        "ratios_per_round": [round(r, 3) for r in ratios],
        "target_ratio": TARGET_RATIO,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"\nCaucus task benchmark ({args.pairs} pairs, {args.duration:g} s phases, "
        f"median of {len(measured)} rounds, SQLite FULL)\n"
    )
    print(f"  task round trips     {relay.fmt(tasks)}   (send -> claim -> reply -> result)")
    print(f"  plain relay          {relay.fmt(plain)}   (send -> receive)")
    print(
        f"  ratio tasks/relay    {figures['ratio_to_relay']:9.2f}   (a round trip is 4 requests,"
        " 3 durable writes)"
    )
    each = ", ".join(f"{r:.2f}" for r in ratios)
    print(f"  ratio per round      {each}   target >= {TARGET_RATIO}")


if __name__ == "__main__":
    main()
