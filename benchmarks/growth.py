"""A room a year old against a new one (issue 53): what each read and the delivery path cost
as the stored history grows, on SQLite and on PostgreSQL, every figure also as a ratio to the
empty room measured in the same run.

For each backend one database grows through the sizes asked (default 0, 100k, 1M): the
history is generated here and carried in with `caucus db import -` (the documented bulk path:
JSON Lines on standard input), then `caucus hub` serves it and this script measures:
- the console's first snapshot (the hub just started) and later ones, the transcript's newest
  and oldest pages, its text filter on a rare word, a thread's summary, an agent's search on a
  common word (medians of a few);
- an open loop at 500 msgs/s (send -> receive p99, the median of `--loops` runs) with the
  hub's loop watch at 2 ms: the worst stall of its event loop during them
  (`GET /operator/upkeep`), retention's size bound out of the way;
- each open loop followed by one on an empty room whose hub runs beside it the whole time
  (`twin_p99_ms`, and `p99_vs_twin`): the empty room on the same machine in the same
  minutes, where the empty room measured first is half an hour before the 10M room;
- the same open loop while retention purges a copy of the database down to 70% of its size;
- the database's size per million messages (`used_mb`: what the size bound reads) and the
  search index's (`index_mb`: on SQLite its own file, ADR 0042; on PostgreSQL the GIN index).
Run: `.venv/bin/python benchmarks/growth.py` (`--quick`; `--sizes 0,100000,1000000,10000000`;
`--backends sqlite`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import relay

TOKEN = "growth-operator-token-0123456789abcdef"  # noqa: S105 (a throwaway hub's)
AGENTS = 50
CHANNELS = 10
SPAN = 20 * 86400.0  # the seeded history's days, ending a little before now
THREAD = "g-thread-root"  # one long thread across the whole history
RARE, COMMON = "zebrafish", "build"
VOCABULARY = (
    "agent task review merge branch commit test suite green red parser module function class "
    "import export type check lint format docs readme issue bug fix patch feature plan design "
    "spec note summary decision vote chair panel round status ready blocked done failed queue "
    "worker lease claim ack receive send route hub room operator console feed event ledger"
)
WORDS = VOCABULARY.split()
HUB_ENV = {
    **relay.BENCH_ENV,
    "CAUCUS_OPERATOR_TOKEN": TOKEN,
    "CAUCUS_LOOP_WATCH_INTERVAL": "0.002",
    "CAUCUS_SEARCH_RATE_CAPACITY": "1000000",
    "CAUCUS_SEARCH_RATE_REFILL": "1000000",
    # Retention purges only in the phase that measures it (the default bound is 256 MiB).
    "CAUCUS_RETENTION_MAX_BYTES": str(1 << 40),
}


# --- the history ---------------------------------------------------------------------------
def history(start: int, count: int, total: int, now: float) -> Iterator[str]:
    """Messages `start` .. `start + count` of a `total`-message history, as JSON Lines: directs,
    channels and broadcasts among `AGENTS` agents, a rare word once in 10,000, replies that
    make threads, and one long thread (`THREAD`) running through all of it."""
    rnd = random.Random(start)
    step = SPAN / max(total, 1)
    base = now - SPAN - 3600
    names = [f"agent-{i:03d}" for i in range(AGENTS)]
    for i in range(start, start + count):
        sender = names[i % AGENTS]
        roll = rnd.random()
        if roll < 0.6:
            to = names[(i * 7 + 1) % AGENTS]
            delivered = [to] if to != sender else []
        elif roll < 0.9:
            to = f"#chan-{i % CHANNELS}"
            delivered = names[:5]
        else:
            to, delivered = "all", names
        words = rnd.choices(WORDS, k=rnd.randint(12, 40))
        if i % 10_000 == 77:
            words.append(RARE)
        message: dict[str, Any] = {
            "seq": i + 1,
            "id": f"g{i:09d}" if i else THREAD,
            "ts": base + i * step,
            "sender": sender,
            "to": to,
            "kind": "chat",
            "content": " ".join(words).capitalize() + ".",
            "delivered_to": delivered,
        }
        if i and i % max(total // 200, 1) == 0:  # the long thread: ~200 replies in all
            message.update(thread=THREAD, reply_to=THREAD)
        elif i > 10 and i % 20 == 0:
            message.update(thread=f"g{i - 10:09d}", reply_to=f"g{i - 10:09d}")
        yield json.dumps(message)


def seed(db: str, start: int, count: int, total: int, now: float) -> float:
    """Carry `count` more messages in with `caucus db import -`; seconds it took."""
    if count <= 0:
        return 0.0
    began = time.perf_counter()
    command = [sys.executable, "-m", "caucus", "db", "import", "-", "--db", db, "--json"]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    assert proc.stdout is not None
    for n, line in enumerate(history(start, count, total, now), start=1):
        proc.stdin.write(line + "\n")
        if n % 200_000 == 0:
            print(f"    seeded {start + n:,}", file=sys.stderr)
    proc.stdin.close()
    report = json.loads(proc.stdout.read())
    if proc.wait() != 0 or report["added"] != count:
        raise SystemExit(f"the import failed: {report}")
    return time.perf_counter() - began


# --- one hub on the database ---------------------------------------------------------------
async def timed_get(url: str, token: str, path: str) -> float:
    """One GET on a connection of its own (a read that takes long must not let another
    connection's keep-alive lapse); its time in ms, connecting excluded."""
    host, port = relay.host_port(url)
    c = await relay.Conn(host, port, token).open()
    try:
        began = time.perf_counter()
        status, data = await c.request("GET", path)
        assert status == 200, (path, status, data[:300])
        return (time.perf_counter() - began) * 1000
    finally:
        c.close()


async def reads(url: str, agent_token: str, reps: int, seeded: bool) -> dict[str, float]:
    host, port = relay.host_port(url)
    figures = {"snapshot_first_ms": await timed_get(url, TOKEN, "/operator/snapshot")}
    agent = await relay.Conn(host, port, agent_token).open()
    thread = f"live-{time.monotonic_ns()}"
    for n in range(20):  # a thread of today's, the same length whatever the history
        body = json.dumps({"to": "all", "content": f"live {COMMON} {n}", "thread": thread})
        status, data = await agent.request("POST", "/send", body.encode())
        assert status == 200, data
    agent.close()
    paths = {
        "snapshot_ms": (TOKEN, "/operator/snapshot"),
        # Pages of 20, which the empty room fills too (the 20 sends above): a page of 200
        # there held ~25 messages, so the ratio counted rows, not the history (3.7x at 1M).
        "newest_page_ms": (TOKEN, "/operator/messages?limit=20"),
        "oldest_page_ms": (TOKEN, "/operator/messages?limit=20&before=21"),
        "text_filter_ms": (TOKEN, f"/operator/messages?limit=50&q={RARE}"),
        "summary_ms": (TOKEN, f"/operator/threads/{thread}/summary"),
        "long_summary_ms": (TOKEN, f"/operator/threads/{THREAD}/summary"),
        "search_ms": (agent_token, f"/search?q={COMMON}&limit=20"),
    }
    for name, (token, path) in paths.items():
        if name == "long_summary_ms" and not seeded:
            continue  # the long thread is the seeded history's
        figures[name] = relay.median([await timed_get(url, token, path) for _ in range(reps)])
    return figures


async def upkeep(url: str) -> dict[str, Any]:
    host, port = relay.host_port(url)
    c = await relay.Conn(host, port, TOKEN).open()
    try:
        status, data = await c.request("GET", "/operator/upkeep")
        assert status == 200, data
        answer: dict[str, Any] = json.loads(data)
        return answer
    finally:
        c.close()


async def open_loop(
    url: str, seconds: float, loops: int, twin: str | None = None
) -> dict[str, float]:
    """500 msgs/s for `seconds`, `loops` times after a warm-up: the median run's send ->
    receive p99 and p50, and the event loop's worst stall over all of them. With `twin` (the
    URL of an empty room's hub, running beside), a loop on it after each one here: its median
    p99 (`twin_p99_ms`) is the empty room on the same machine in the same minutes, where the
    empty room measured first is half an hour away at 10M (PostgreSQL's read 13.4 and 25.4 ms
    in two runs of the same build)."""
    await relay.relay_run(url, 5, 1.0, 500.0, time.monotonic_ns() % 10**9)  # warm up
    if twin is not None:
        await relay.relay_run(twin, 5, 1.0, 500.0, time.monotonic_ns() % 10**9)
    p99s, p50s, stalls, twins = [], [], [0.0], []
    for _ in range(loops):
        began = time.time()
        result = await relay.relay_run(url, 5, seconds, 500.0, time.monotonic_ns() % 10**9)
        ended = time.time()
        p99s.append(result.pct(99))
        p50s.append(result.pct(50))
        stalls += [s["ms"] for s in (await upkeep(url))["stalls"] if began <= s["at"] <= ended]
        if twin is not None:
            beside = await relay.relay_run(twin, 5, seconds, 500.0, time.monotonic_ns() % 10**9)
            twins.append(beside.pct(99))
    figures = {"p99_ms": relay.median(p99s), "p50_ms": relay.median(p50s)}
    figures["stall_ms"] = max(stalls)
    if twins:
        figures["twin_p99_ms"] = relay.median(twins)
        figures["p99_vs_twin"] = figures["p99_ms"] / figures["twin_p99_ms"]
    return figures


async def serve_and_measure(
    db: str, folder: Path, args: argparse.Namespace, twin: str | None
) -> dict[str, float]:
    env = {**HUB_ENV, "CAUCUS_HOME": str(folder)}
    proc, url = relay.start(relay.hub_command(db), env)
    try:
        agent = await relay.register(url, f"reader-{time.monotonic_ns()}")
        host, port = relay.host_port(url)
        join = await relay.Conn(host, port, agent).open()
        await join.request("POST", "/channels/join", b'{"channel": "#chan-1"}')
        join.close()
        figures = await reads(url, agent, args.reps, twin is not None)
        figures |= await open_loop(url, args.seconds, args.loops, twin)
        figures["used_mb"] = (await upkeep(url))["store"]["used_bytes"] / 1_048_576
        return figures
    finally:
        relay.stop(proc)


async def purging(
    db: str, folder: Path, bound: int, args: argparse.Namespace, twin: str
) -> dict[str, float]:
    """The open loop while retention purges `db` down to `bound` bytes (and on the empty
    room beside it, `twin`)."""
    env = {**HUB_ENV, "CAUCUS_HOME": str(folder), "CAUCUS_RETENTION_MAX_BYTES": str(bound)}
    proc, url = relay.start(relay.hub_command(db), env)
    try:
        loop = await open_loop(url, args.seconds, args.loops, twin)
        left = (await upkeep(url))["store"]["used_bytes"] / 1_048_576
        return {
            "purge_p99_ms": loop["p99_ms"],
            "purge_twin_p99_ms": loop["twin_p99_ms"],
            "purge_p99_vs_twin": loop["p99_vs_twin"],
            "purge_stall_ms": loop["stall_ms"],
            "purged_to_mb": left,
        }
    finally:
        relay.stop(proc)


# --- the backends --------------------------------------------------------------------------
class Sqlite:
    name = "sqlite"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.db = str(folder / "growth.db")

    def index_mb(self) -> float:
        """The search index's file beside the room's (ADR 0042)."""
        path = Path(self.db + ".search")
        return path.stat().st_size / 1_048_576 if path.exists() else 0.0

    def twin(self) -> str:
        """An empty room beside the one that grows."""
        return str(self.folder / "twin.db")

    def copy(self) -> str:
        target = self.folder / "purging.db"
        for suffix in ("", "-wal", ".search", ".search-wal"):
            source = Path(self.db + suffix)
            if source.exists():
                shutil.copyfile(source, str(target) + suffix)
        return str(target)


class Postgres:
    name = "postgres"

    def __init__(self, server: Any) -> None:
        from caucus.testing.postgres import fresh_database

        self.server = server
        self.db = fresh_database(server, "growth")
        self._twin = fresh_database(server, "twin")

    def twin(self) -> str:
        """An empty room beside the one that grows."""
        return self._twin

    def index_mb(self) -> float:
        """The GIN index over the messages' words."""
        import psycopg

        with psycopg.connect(self.db) as conn:
            row = conn.execute("SELECT pg_relation_size('messages_search')").fetchone()
        return float(row[0]) / 1_048_576 if row else 0.0

    def copy(self) -> str:
        import psycopg

        name = f"purging_{time.monotonic_ns()}"
        source = self.db.rsplit("/", 1)[1]
        with psycopg.connect(self.server.admin_dsn, autocommit=True) as conn:
            # Copied as files, checkpointed before and after (as a restored backup would be):
            # PostgreSQL 15's default writes the whole copy through the WAL, and the hub then
            # served gigabytes of it to the disk beside its sends (p99 262 ms at 10M).
            strategy = " STRATEGY FILE_COPY" if conn.info.server_version >= 150000 else ""
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"{strategy}'.encode())
        return self.server.dsn(name)


def grow(
    store: Sqlite | Postgres, folder: Path, args: argparse.Namespace
) -> dict[int, dict[str, float]]:
    rows: dict[int, dict[str, float]] = {}
    now, seeded, total = time.time(), 0, max(args.sizes)
    home = folder / "twin"
    home.mkdir()
    twin, twin_url = relay.start(
        relay.hub_command(store.twin()), {**HUB_ENV, "CAUCUS_HOME": str(home)}
    )
    try:
        for size in args.sizes:
            print(f"  {store.name}: {size:,} messages", file=sys.stderr)
            took = seed(store.db, seeded, size - seeded, total, now)
            seeded = size
            beside = twin_url if size > 0 else None
            figures = asyncio.run(serve_and_measure(store.db, folder, args, beside))
            figures["seed_s"] = took
            figures["index_mb"] = store.index_mb()
            if size and not args.no_purge:
                bound = int(figures["used_mb"] * 0.7 * 1_048_576)
                figures |= asyncio.run(purging(store.copy(), folder, bound, args, twin_url))
            rows[size] = figures
            print(json.dumps({"backend": store.name, "size": size, **figures}), file=sys.stderr)
    finally:
        relay.stop(twin)
    return rows


def table(name: str, rows: dict[int, dict[str, float]]) -> str:
    sizes = sorted(rows)
    base = rows[sizes[0]]
    keys = [k for k in rows[sizes[-1]] if k != "seed_s"]
    out = [f"{name:<18}" + "".join(f"{s:>24,}" for s in sizes)]
    for key in keys:
        cells = []
        for s in sizes:
            value = rows[s].get(key)
            if value is None:
                cells.append(f"{'-':>24}")
                continue
            ratio = f" ({value / base[key]:.2f}x)" if base.get(key) else ""
            cells.append(f"{value:>14.2f}{ratio:>10}")
        out.append(f"{key:<18}" + "".join(cells))
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,100000,1000000")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--reps", type=int, default=5, help="requests per read figure")
    parser.add_argument("--seconds", type=float, default=10.0, help="each open loop's length")
    parser.add_argument("--loops", type=int, default=3, help="open loops per phase (median)")
    parser.add_argument("--no-purge", action="store_true", help="skip the purging phase")
    parser.add_argument("--quick", action="store_true", help="0 and 20,000 messages, 3 s loops")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    if args.quick:
        args.sizes, args.seconds, args.reps, args.loops = [0, 20_000], 3.0, 3, 1
    report: dict[str, Any] = {}
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory(prefix="caucus-growth-") as tmp:
            folder = Path(tmp)
            if backend == "sqlite":
                report[backend] = grow(Sqlite(folder), folder, args)
                continue
            from caucus.testing.postgres import throwaway_cluster

            with throwaway_cluster(durable=True) as server:
                report[backend] = grow(Postgres(server), folder, args)
    for backend, rows in report.items():
        print(table(backend, rows))
        print()
    print(json.dumps({b: {str(k): v for k, v in r.items()} for b, r in report.items()}))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
