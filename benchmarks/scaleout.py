"""Several hub processes on one PostgreSQL database vs one process on SQLite, in one run.

Starts a throwaway PostgreSQL cluster (fsync and synchronous commit on, as in production) and
measures, over real HTTP on loopback:

- SQLite, one `caucus hub` process (the baseline);
- PostgreSQL with 1, 2 and 4 `caucus hub` processes sharing one database, each sender talking
  to a process other than its receiver's whenever there is more than one.

For each: durable messages/s in a closed loop (N sender/receiver pairs as fast as they go),
send->receive p50/p99 at an offered rate (default 500/s, open loop), and the wake-up latency of
a parked receive (one message at a time; across processes when there are several). It prints
the figures and each one's ratio to the SQLite baseline, and the CPU each message costs (user +
system from /proc over the closed loop): the hub processes together and each, PostgreSQL's
backends serving them and its own processes, so what more cores would carry can be worked out
from a 2-core run. Goal (issue 14): PostgreSQL with one process >= 0.5x SQLite, throughput
rising with processes; issue 33 asks 0.8x, judged on the median of `--reps` closed loops
alternating a SQLite process and a PostgreSQL one, both running (a shared machine's drift then
moves both sides alike). Run:
`.venv/bin/python benchmarks/scaleout.py` (`--quick` for 1-second phases).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "src"))

import relay
from caucus.testing.postgres import fresh_database, throwaway_cluster

TARGET_ONE = 0.8  # PostgreSQL with one process over SQLite's one (issue 33; issue 14 had 0.5)
TARGET_CPU = 1.3  # its hub's CPU per message over SQLite's (issue 53)


def start_hubs(db: str, n: int, home: Path) -> list[tuple[Any, str]]:
    env = {**relay.BENCH_ENV, "CAUCUS_HOME": str(home)}
    return [relay.start(relay.hub_command(db), env) for _ in range(n)]


async def wake_run(urls: list[str], samples: int, run: int) -> relay.Result:
    """One message at a time to a receive already parked (on another process when there are
    several): send start -> receive return."""
    sender_url, receiver_url = urls[0], urls[-1]
    s_token = await relay.register(sender_url, f"ws{run}")
    r_token = await relay.register(receiver_url, f"wr{run}")
    s = await relay.Conn(*relay.host_port(sender_url), s_token).open()
    r = await relay.Conn(*relay.host_port(receiver_url), r_token).open()
    lat: list[float] = []
    ack: int | None = None
    for _ in range(samples):
        path = "/receive?timeout=10" + (f"&ack={ack}" if ack is not None else "")
        parked = asyncio.create_task(r.request("GET", path))
        await asyncio.sleep(0.02)  # the receive is parked before the send
        t0 = time.perf_counter()
        body = json.dumps({"to": f"wr{run}", "content": "wake"}).encode()
        status, data = await s.request("POST", "/send", body)
        assert status == 200, data
        status, data = await parked
        lat.append((time.perf_counter() - t0) * 1000)
        messages = json.loads(data)["messages"]
        assert messages, "the parked receive timed out instead of waking"
        ack = messages[-1]["seq"]
    s.close()
    r.close()
    return relay.Result(samples / max(sum(lat) / 1000, 1e-9), lat)


def cpu_ticks() -> tuple[int, int] | None:
    """(busy, total) jiffies of the whole machine so far (Linux), to say how much of it a
    phase used: the load generator, the hubs and the server share its cores."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def postgres_processes(postmaster: int, database: str) -> dict[int, bool]:
    """The server's processes: pid -> whether it is a backend serving `database` (a hub's
    connection) rather than one of the server's own (WAL writer, checkpointer...)."""
    found = {postmaster: False}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == postmaster:
            found[int(entry.name)] = f" {database} " in command
    return found


def cpu_by_pid(pids: list[int]) -> dict[int, float]:
    spent = {}
    for pid in pids:
        try:
            spent[pid] = relay.process_cpu(pid)
        except OSError:  # it ended
            continue
    return spent


class CpuWatch:
    """CPU seconds the hubs and the PostgreSQL server's processes spend over a phase."""

    def __init__(self, hubs: list[int], postmaster: int | None, database: str) -> None:
        self.hubs, self.postmaster, self.database = hubs, postmaster, database

    def read(self) -> tuple[dict[int, float], dict[int, float], dict[int, bool]]:
        server = postgres_processes(self.postmaster, self.database) if self.postmaster else {}
        return cpu_by_pid(self.hubs), cpu_by_pid(list(server)), server

    @staticmethod
    def spent(before: dict[int, float], after: dict[int, float], which: list[int]) -> float:
        return sum(after.get(p, 0.0) - before.get(p, 0.0) for p in which if p in after)


async def measure(
    urls: list[str], args: argparse.Namespace, run: int, watch: CpuWatch
) -> dict[str, relay.Result]:
    base, pairs = urls[0], args.pairs
    await relay.relay_run(base, pairs, 1.0, None, run * 10, spread=urls)  # warm up
    readings: list[tuple[Any, ...]] = []  # as the messages start to flow, and once they end

    def reading() -> None:
        readings.append((cpu_ticks(), *watch.read()))

    tp = await relay.relay_run(
        base, pairs, args.duration, None, run * 10 + 1, spread=urls, window=reading
    )
    (before, hubs_0, server_0, _), (after, hubs_1, server_1, kinds) = readings
    if before is not None and after is not None and after[1] > before[1]:
        tp.busy = (after[0] - before[0]) / (after[1] - before[1])
    if tp.count:
        per = 1e6 / tp.count
        tp.cpu_us = CpuWatch.spent(hubs_0, hubs_1, watch.hubs) * per
        backends = [p for p, backend in kinds.items() if backend]
        others = [p for p, backend in kinds.items() if not backend]
        tp.backend_cpu_us = CpuWatch.spent(server_0, server_1, backends) * per
        tp.server_cpu_us = CpuWatch.spent(server_0, server_1, others) * per
        tp.backends = len(backends)
    lat = await relay.relay_run(base, pairs, args.duration, args.rate, run * 10 + 2, spread=urls)
    wake = await wake_run(urls, args.wakes, run=run * 10 + 3)
    return {"throughput": tp, "latency": lat, "wake": wake}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=64, help="sender/receiver pairs")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    parser.add_argument("--rate", type=float, default=500.0, help="offered messages/s")
    parser.add_argument("--wakes", type=int, default=100, help="wake-up samples")
    parser.add_argument("--processes", default="1,2,4", help="PostgreSQL process counts")
    parser.add_argument(
        "--reps", type=int, default=3, help="alternations of SQLite and PostgreSQL x1 (the ratio)"
    )
    parser.add_argument("--quick", action="store_true", help="1-second phases, 30 wake-ups")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()
    if args.quick:
        args.duration, args.wakes = 1.0, 30
    counts = [int(n) for n in args.processes.split(",")]
    figures: dict[str, dict[str, relay.Result]] = {}
    # The hubs' folders (databases, tokens: ~27 MB) go when the run ends.
    with tempfile.TemporaryDirectory(prefix="caucus-scaleout-") as folder:
        tmp = Path(folder)
        print("SQLite, one process...", file=sys.stderr)
        hubs = start_hubs(str(tmp / "bench.db"), 1, tmp / "sqlite")
        try:
            watch = CpuWatch([p.pid for p, _ in hubs], None, "")
            figures["sqlite x1"] = asyncio.run(measure([u for _, u in hubs], args, 0, watch))
        finally:
            for proc, _ in hubs:
                relay.stop(proc)
        with throwaway_cluster(durable=True) as server:
            for n in counts:
                print(f"PostgreSQL, {n} process{'es' if n > 1 else ''}...", file=sys.stderr)
                dsn = fresh_database(server, "bench")
                hubs = start_hubs(dsn, n, tmp / f"pg{n}")
                try:
                    database = dsn.rpartition("/")[2].partition("?")[0]
                    watch = CpuWatch([p.pid for p, _ in hubs], server.pid, database)
                    figures[f"postgres x{n}"] = asyncio.run(
                        measure([u for _, u in hubs], args, n, watch)
                    )
                finally:
                    for proc, _ in hubs:
                        relay.stop(proc)
            ratios = alternated(server, tmp, args) if 1 in counts and args.reps > 0 else []
    report(figures, args, ratios)


def alternated(server: Any, tmp: Path, args: argparse.Namespace) -> list[tuple[float, float]]:
    """One process on each backend, both running, their closed loops alternated `--reps`
    times: each rep's own ratios, of throughput and of the hub's CPU per message. A shared
    machine drifts over a run; measured back to back, both sides of a ratio drift alike (as
    relay.py measures against its bare endpoint)."""
    print(f"SQLite and PostgreSQL x1 alternated, {args.reps} reps...", file=sys.stderr)
    lite = start_hubs(str(tmp / "alternated.db"), 1, tmp / "alt-sqlite")
    pg = start_hubs(fresh_database(server, "alt"), 1, tmp / "alt-pg")
    try:
        hubs = [lite[0], pg[0]]

        async def reps() -> list[tuple[float, float]]:
            for i, (_, url) in enumerate(hubs):
                await relay.relay_run(url, args.pairs, 1.0, None, 900 + i)  # warm up
            out: list[tuple[float, float]] = []
            for rep in range(args.reps):
                got = [
                    await relay.relay_run(
                        url, args.pairs, args.duration, None, 910 + 2 * rep + i, pid=proc.pid
                    )
                    for i, (proc, url) in enumerate(hubs)
                ]
                out.append((got[1].rate / got[0].rate, got[1].cpu_us / got[0].cpu_us))
            return out

        return asyncio.run(reps())
    finally:
        for proc, _ in lite + pg:
            relay.stop(proc)


def report(
    figures: dict[str, dict[str, relay.Result]],
    args: argparse.Namespace,
    alternations: list[tuple[float, float]],
) -> None:
    ratios = [tp for tp, _ in alternations]
    cpu_ratios = [cpu for _, cpu in alternations]
    base = figures["sqlite x1"]
    rows: dict[str, dict[str, float]] = {}
    for name, f in figures.items():
        rows[name] = {
            "msgs_per_s": round(f["throughput"].rate, 1),
            "ratio_to_sqlite": round(f["throughput"].rate / base["throughput"].rate, 3),
            "p50_ms_at_rate": round(f["latency"].pct(50), 2),
            "p99_ms_at_rate": round(f["latency"].pct(99), 2),
            "wake_p50_ms": round(f["wake"].pct(50), 2),
            "wake_p99_ms": round(f["wake"].pct(99), 2),
            "machine_busy": round(f["throughput"].busy, 3),
            "hub_cpu_us_per_msg": round(f["throughput"].cpu_us, 1),
            "backend_cpu_us_per_msg": round(f["throughput"].backend_cpu_us, 1),
            "server_cpu_us_per_msg": round(f["throughput"].server_cpu_us, 1),
            "backends": f["throughput"].backends,
        }
    one_ratio = relay.median(ratios) if ratios else None
    if args.json:
        doc = {
            "pairs": args.pairs,
            "rate": args.rate,
            "cores": os.cpu_count(),
            "runs": rows,
            "one_process_ratios": [round(r, 3) for r in ratios],
            "one_process_ratio": None if one_ratio is None else round(one_ratio, 3),
            "one_process_cpu_ratios": [round(r, 3) for r in cpu_ratios],
            "one_process_cpu_ratio": round(relay.median(cpu_ratios), 3) if cpu_ratios else None,
        }
        print(json.dumps(doc, indent=2))
        return
    print(
        f"{args.pairs} pairs; latency at an offered {args.rate:g}/s; {args.wakes} wake-ups; "
        f"{os.cpu_count()} cores for the load, the hubs and the server"
    )
    print(
        f"{'':14}{'msgs/s':>9}{'x sqlite':>10}{'p50':>9}{'p99':>9}{'wake p50':>10}{'p99':>8}"
        f"{'cpu busy':>10}"
    )
    for name, r in rows.items():
        print(
            f"{name:14}{r['msgs_per_s']:9.0f}{r['ratio_to_sqlite']:10.2f}"
            f"{r['p50_ms_at_rate']:8.2f}ms{r['p99_ms_at_rate']:7.2f}ms"
            f"{r['wake_p50_ms']:8.2f}ms{r['wake_p99_ms']:6.2f}ms{r['machine_busy']:10.0%}"
        )
    print("cpu busy: the share of the whole machine (every core) used while msgs/s was measured")
    print(
        f"\nCPU per message in the closed loop (user + system, /proc), the hubs together and "
        f"per process, and PostgreSQL's:\n{'':14}{'hubs':>8}{'per hub':>9}{'backends':>10}"
        f"{'server':>8}"
    )
    for name, r in rows.items():
        n = int(name.rpartition("x")[2])
        print(
            f"{name:14}{r['hub_cpu_us_per_msg']:6.0f}us{r['hub_cpu_us_per_msg'] / n:7.0f}us"
            f"{r['backend_cpu_us_per_msg']:8.0f}us{r['server_cpu_us_per_msg']:6.0f}us"
            f"   ({r['backends']} backends)"
        )
    print(
        "backends: the PostgreSQL processes serving the hubs' connections; server: its own "
        "(WAL writer, checkpointer...). With C cores and none spent on the load generator, "
        "msgs/s is at most C / (hubs + backends + server) per message."
    )
    if one_ratio is not None:
        verdict = "meets" if one_ratio >= TARGET_ONE else "misses"
        each = ", ".join(f"{r:.2f}" for r in ratios)
        print(
            f"PostgreSQL, one process: {one_ratio:.2f}x SQLite, the median of {len(ratios)} "
            f"alternated reps ({each}) ({verdict} issue 33's {TARGET_ONE}x)"
        )
        cpu = relay.median(cpu_ratios)
        verdict = "meets" if cpu <= TARGET_CPU else "misses"
        each = ", ".join(f"{r:.2f}" for r in cpu_ratios)
        print(
            f"PostgreSQL, one process: {cpu:.2f}x SQLite's hub CPU per message while messages "
            f"flow, the median of the same reps ({each}) ({verdict} issue 53's {TARGET_CPU}x)"
        )
    rates = [rows[k]["msgs_per_s"] for k in rows if k.startswith("postgres")]
    rising = all(b >= a for a, b in itertools.pairwise(rates))
    print(
        f"throughput with processes: {' -> '.join(f'{r:.0f}' for r in rates)}"
        f" ({'rising' if rising else 'not rising'})"
    )


if __name__ == "__main__":
    main()
