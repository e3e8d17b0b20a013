"""Task round trips per second, beside the plain relay, over real HTTP, in the same run.

A round trip: the sender sends a task, the worker receives it (which claims it) and replies, and
the sender receives the result. Two shapes, against `caucus hub` (SQLite, synchronous=FULL):

- pipelined, the relay's own shape: each of N senders posts tasks without waiting for their
  results (at most `--window` outstanding), its worker takes what has arrived in one receive
  and replies to each, the sender's results arrive on a receive of their own. The relay's
  senders do the same with messages (they never wait for a delivery), so this is the ratio
  issue 33 asks for: throughput against throughput.
- one at a time: each pair runs round trips back to back, the next sent only when the last
  result is in (four requests in a row each time): the latency a single caller sees.

The same hub runs the plain relay (`benchmarks/relay.py`'s closed loop) after each, for the
ratio. Run: `.venv/bin/python benchmarks/tasks.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

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


async def pipelined_round_trips(
    url: str, pairs: int, duration: float, run: int, window: int
) -> relay.Result:
    """Round trips with up to `window` tasks outstanding per sender (see the module doc)."""
    host, port = relay.host_port(url)
    names = [(f"ps{run}-{i}", f"pw{run}-{i}") for i in range(pairs)]
    tokens = {n: await relay.register(url, n) for pair in names for n in pair}
    posted: dict[str, float] = {}  # task id -> when its sender posted it
    early: set[str] = set()  # results that came back before their POST's answer was read
    latencies: list[float] = []
    done = 0
    start = time.perf_counter()
    end = start + duration
    stop = asyncio.Event()

    def settled(task_id: str, now: float, slots: asyncio.Semaphore) -> None:
        nonlocal done
        t0 = posted.pop(task_id, None)
        if t0 is None:
            early.add(task_id)
            return
        slots.release()
        if now <= end:
            done += 1
            latencies.append((now - t0) * 1000)

    async def inbox(
        c: relay.Conn, each: Callable[[dict[str, Any], float], Awaitable[None]]
    ) -> None:
        async def got(messages: list[dict[str, Any]], now: float) -> None:
            for m in messages:
                await each(m, now)

        await relay.receive_loop(c, stop, got)

    async def pair(sender: str, worker: str) -> None:
        opened = [relay.Conn(host, port, tokens[n]).open() for n in (sender, sender, worker)]
        post, results, work = await asyncio.gather(*opened)
        slots = asyncio.Semaphore(window)
        body = json.dumps({"to": worker, "payload": relay.PAD}).encode()
        reply = json.dumps({"result": "done"}).encode()

        async def on_result(m: dict[str, Any], now: float) -> None:
            if m["kind"] == "result":
                settled(m["meta"]["task_id"], now, slots)

        async def on_task(m: dict[str, Any], _: float) -> None:
            if m["kind"] == "task":
                task_id = m["meta"]["task_id"]
                status, data = await work.request("POST", f"/tasks/{task_id}/reply", reply)
                assert status == 200, data

        async def posting() -> None:
            while True:
                await slots.acquire()
                t0 = time.perf_counter()
                if t0 >= end:
                    return
                status, data = await post.request("POST", "/tasks", body)
                assert status == 200, data
                task_id = json.loads(data)["task_id"]
                posted[task_id] = t0
                if task_id in early:
                    early.discard(task_id)
                    settled(task_id, time.perf_counter(), slots)

        readers = [
            asyncio.create_task(inbox(results, on_result)),
            asyncio.create_task(inbox(work, on_task)),
        ]
        try:
            await posting()
            await asyncio.sleep(max(0.0, end - time.perf_counter()))
            stop.set()
            await asyncio.gather(*readers)
        finally:
            for c in (post, results, work):
                c.close()

    await asyncio.gather(*(pair(s, w) for s, w in names))
    return relay.Result(done / duration, latencies)


Round = tuple[relay.Result, relay.Result, relay.Result]  # pipelined, one at a time, relay


async def measure(url: str, pairs: int, duration: float, rounds: int, window: int) -> list[Round]:
    """`rounds` of (pipelined round trips, one-at-a-time round trips, the relay), alternating
    on the same hub, so that a shared machine's slow minute lands on both sides of a ratio
    rather than on one."""
    await pipelined_round_trips(url, pairs, 1.0, run=0, window=window)  # warm up
    await task_round_trips(url, pairs, 1.0, run=0)
    await relay.relay_run(url, pairs, 1.0, None, run=100)
    measured = []
    for i in range(rounds):
        print(f"round {i + 1} of {rounds}...", file=sys.stderr)
        pipelined = await pipelined_round_trips(url, pairs, duration, run=1 + i, window=window)
        single = await task_round_trips(url, pairs, duration, run=1 + i)
        plain = await relay.relay_run(url, pairs, duration, None, run=101 + i)
        measured.append((pipelined, single, plain))
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=32)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    parser.add_argument("--rounds", type=int, default=3, help="task/relay rounds (the median)")
    parser.add_argument("--window", type=int, default=8, help="tasks outstanding per sender")
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
        measured = asyncio.run(
            measure(url, args.pairs, args.duration, max(1, args.rounds), args.window)
        )
    finally:
        relay.stop(hub)
    ratios = [t.rate / p.rate for t, _, p in measured]
    singles = [one.rate / p.rate for _, one, p in measured]
    tasks, single, plain = measured[ratios.index(statistics.median_low(ratios))]
    figures = {
        "pairs": args.pairs,
        "window": args.window,
        "rounds": len(measured),
        "task_round_trips_per_s": round(tasks.rate),
        "task_p50_ms": round(tasks.pct(50), 2),
        "task_p99_ms": round(tasks.pct(99), 2),
        "relay_msgs_per_s": round(plain.rate),
        "ratio_to_relay": round(tasks.rate / plain.rate, 3),
        "ratios_per_round": [round(r, 3) for r in ratios],
        "one_at_a_time_per_s": round(single.rate),
        "one_at_a_time_p50_ms": round(single.pct(50), 2),
        "one_at_a_time_ratio_to_relay": round(statistics.median_low(singles), 3),
        "target_ratio": TARGET_RATIO,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"\nCaucus task benchmark ({args.pairs} pairs, {args.duration:g} s phases, "
        f"median of {len(measured)} rounds, SQLite FULL)\n"
    )
    print(
        f"  task round trips     {relay.fmt(tasks)}   (pipelined, {args.window} outstanding"
        " per sender: send -> claim -> reply -> result)"
    )
    print(f"  one at a time        {relay.fmt(single)}   (the next sent once the result is in)")
    print(f"  plain relay          {relay.fmt(plain)}   (send -> receive)")
    print(
        f"  ratio tasks/relay    {figures['ratio_to_relay']:9.2f}   (pipelined; one at a time"
        f" {figures['one_at_a_time_ratio_to_relay']:.2f}: four requests in a row)"
    )
    each = ", ".join(f"{r:.2f}" for r in ratios)
    verdict = "within target" if figures["ratio_to_relay"] >= TARGET_RATIO else "OUTSIDE target"
    print(f"  ratio per round      {each}   target >= {TARGET_RATIO}: {verdict}")


if __name__ == "__main__":
    main()
