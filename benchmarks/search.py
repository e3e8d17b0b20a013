"""Search latency at a million stored messages, against a plain indexed lookup in the same run.

1. A database is made by the hub (its migrations), 100 agents register and 10 channels get 20
   members each; then N messages (1,000,000 by default) are written straight into it, as the
   hub stores them: 60% directs, 30% channel messages, 10% broadcasts, each two or three
   sentences drawn from a Zipf-like vocabulary, with marker words at known rates.
2. SQLite: the hub's own indexer (`SearchService.follow`, what the maintenance tick runs)
   indexes them all; its rate is printed. PostgreSQL keeps its GIN index as rows arrive.
3. Through the hub's services and engine, each search runs `--reps` times against random
   seqs looked up by primary key (`Messages.by_seq`), interleaved, so both see the same
   machine: p50 and p99 of each, and the ratio of search to lookup.

Run: `.venv/bin/python benchmarks/search.py` (`--messages 200000` for a quick look;
`--backend postgres` on a throwaway PostgreSQL cluster; `--json`).

`--contention` (issue 47) measures instead what heavy searching costs everyone else: a
`caucus hub` process on a file of 40,000 messages; an agent peeks at its inbox over HTTP
(from another loopback address, as another machine's agent would), first alone, then while 8
other agents each search with 12 phrases as fast as the hub lets them (each honours a 429's
or 503's Retry-After), then again with the search budget lifted so only the costly-read lane
and the time budget stand between them and the peeks. It prints the peeks' p50 and p99 in
each phase and the ratio of the loaded p99 to the quiet one (the bar: within 3x).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from caucus.domain.peers import Peer
from caucus.services.hub import Hub
from caucus.testing import make_hub

sys.path.insert(0, str(Path(__file__).parent))

import floods
import relay

AGENTS = 100
CHANNELS = 10
MEMBERS = 20
WORDS = re.findall(
    r"\w+",
    "build test deploy review merge branch commit parser cache index query table schema "
    "migration release config token agent task offer floor channel thread message reply "
    "error retry timeout socket client server request response latency memory disk file "
    "module function class method import export type check lint format docs readme issue "
    "bug fix patch feature plan design spec note summary decision vote chair panel round "
    "status ready blocked done failed pending queue worker lease claim ack receive send "
    "route hub room operator console feed event ledger hash chain verify anchor record",
)
# Marker words and phrases, with how often a message holds them.
RARE = ("zebrafish", 0.0001)  # ~100 in a million
MEDIUM = ("kumquat", 0.01)  # ~10,000
PHRASE = ("kumquat pie", 0.001)  # ~1,000 hold the phrase (inside the kumquat ones)


def sentences(rnd: random.Random, n: int) -> list[str]:
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    out = []
    for _ in range(n):
        words = rnd.choices(WORDS, weights, k=rnd.randint(6, 14))
        out.append(" ".join(words).capitalize() + ".")
    return out


def rows(
    n: int, peers: list[tuple[int, str]], channels: dict[str, list[str]], now: float
) -> Iterator[tuple[Any, ...]]:
    rnd = random.Random(34)
    pool = sentences(rnd, 20_000)
    names = [p[1] for p in peers]
    all_names = json.dumps(names)
    for i in range(n):
        text = " ".join(rnd.choice(pool) for _ in range(rnd.randint(2, 3)))
        roll = rnd.random()
        if roll < RARE[1]:
            text += f" Saw a {RARE[0]} in the logs."
        if roll < PHRASE[1]:
            text += f" We had {PHRASE[0]} after the release."
        elif roll < MEDIUM[1]:
            text += f" The {MEDIUM[0]} build is green."
        sender_id, sender = peers[rnd.randrange(AGENTS)]
        kind = rnd.random()
        if kind < 0.6:
            to = rnd.choice(names)
            delivered = json.dumps([to])
        elif kind < 0.9:
            to = rnd.choice(list(channels))
            delivered = json.dumps([m for m in channels[to] if m != sender])
        else:
            to, delivered = "all", all_names
        ts = now - (n - i) * 0.5
        yield (f"m{i:08d}", ts, sender_id, sender, to, "chat", text, delivered)


async def setup(hub: Hub) -> tuple[list[tuple[int, str]], dict[str, list[str]], Peer]:
    peers: list[Peer] = [
        (await hub.principals.register(name=f"agent-{i:03d}")).peer for i in range(AGENTS)
    ]
    rnd = random.Random(7)
    channels: dict[str, list[str]] = {}
    for c in range(CHANNELS):
        name = f"#chan-{c}"
        members = rnd.sample(peers, MEMBERS)
        for p in members:
            await hub.channels.join(p, name)
        channels[name] = [p.name for p in members]
    return [(p.id, p.name) for p in peers], channels, peers[0]


INSERT_SQLITE = (
    "INSERT INTO messages (id, ts, sender_id, sender, target, kind, content, delivered_to)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def fill_sqlite(path: Path, source: Iterator[tuple[Any, ...]], n: int) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    batch: list[tuple[Any, ...]] = []
    done = 0
    for row in source:
        batch.append(row)
        if len(batch) == 50_000:
            conn.execute("BEGIN")
            conn.executemany(INSERT_SQLITE, batch)
            conn.execute("COMMIT")
            done += len(batch)
            batch.clear()
            print(f"  stored {done:,}/{n:,}", file=sys.stderr, end="\r")
    if batch:
        conn.execute("BEGIN")
        conn.executemany(INSERT_SQLITE, batch)
        conn.execute("COMMIT")
    conn.close()
    print(file=sys.stderr)


def fill_postgres(dsn: str, source: Iterator[tuple[Any, ...]], n: int) -> None:
    import psycopg

    columns = "id, ts, sender_id, sender, target, kind, content, delivered_to"
    with psycopg.connect(dsn, autocommit=True) as conn:
        done = 0
        chunk: list[tuple[Any, ...]] = []

        def flush() -> None:
            with conn.cursor() as cur, cur.copy(f"COPY messages ({columns}) FROM STDIN") as copy:
                for row in chunk:
                    copy.write_row(row)

        for row in source:
            chunk.append(row)
            if len(chunk) == 50_000:
                flush()
                done += len(chunk)
                chunk.clear()
                print(f"  stored {done:,}/{n:,}", file=sys.stderr, end="\r")
        if chunk:
            flush()
        conn.execute("ANALYZE messages")
    print(file=sys.stderr)


def quantiles(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(len(xs) * 0.99))]


async def measure(hub: Hub, agent: Peer, n: int, reps: int) -> dict[str, dict[str, float]]:
    rnd = random.Random(99)
    searches: dict[str, Callable[[], Awaitable[Any]]] = {
        f"rare word ({RARE[0]})": lambda: hub.search.search(None, RARE[0]),
        f"medium word ({MEDIUM[0]})": lambda: hub.search.search(None, MEDIUM[0]),
        "common word (build)": lambda: hub.search.search(None, "build"),
        f'phrase ("{PHRASE[0]}")': lambda: hub.search.search(None, f'"{PHRASE[0]}"'),
        "two words (kumquat green)": lambda: hub.search.search(None, "kumquat green"),
        "medium word, newest first": lambda: hub.search.search(None, MEDIUM[0], order="recent"),
        "medium word, as an agent": lambda: hub.search.search(agent, MEDIUM[0]),
    }
    lookup: list[float] = []
    timings: dict[str, list[float]] = {k: [] for k in searches}
    hits: dict[str, int] = {}
    for k, run in searches.items():  # warm once, and count the hits
        found = await run()
        hits[k] = len(found.hits)
    for _ in range(reps):
        for k, run in searches.items():
            seq = rnd.randint(1, n)
            t = time.perf_counter()
            await hub._db.read(lambda r, s=seq: r.messages.by_seq(s))
            lookup.append(time.perf_counter() - t)
            t = time.perf_counter()
            await run()
            timings[k].append(time.perf_counter() - t)
    base50, base99 = quantiles(lookup)
    out = {"lookup by seq": {"p50_ms": base50 * 1e3, "p99_ms": base99 * 1e3, "ratio_p50": 1.0}}
    for k, xs in timings.items():
        p50, p99 = quantiles(xs)
        out[k] = {
            "p50_ms": p50 * 1e3,
            "p99_ms": p99 * 1e3,
            "ratio_p50": p50 / base50,
            "hits": hits[k],
        }
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {"messages": args.messages, "backend": args.backend}
    with tempfile.TemporaryDirectory(prefix="caucus-search-") as tmp:
        folder = Path(tmp)
        overrides: dict[str, Any] = {}
        if args.backend == "postgres":
            from caucus.testing.postgres import fresh_database, throwaway_cluster

            cluster = throwaway_cluster()
            server = cluster.__enter__()
            overrides["db"] = fresh_database(server, "search")
        try:
            async with make_hub(folder, **overrides) as hub:
                peers, channels, _ = await setup(hub)
                now = hub.clock.now()
            source = rows(args.messages, peers, channels, now)
            print(f"Storing {args.messages:,} messages...", file=sys.stderr)
            t = time.perf_counter()
            if args.backend == "postgres":
                fill_postgres(overrides["db"], source, args.messages)
            else:
                fill_sqlite(folder / "caucus.db", source, args.messages)
            report["store_s"] = time.perf_counter() - t
            async with make_hub(folder, **overrides) as hub:
                if args.backend == "sqlite":
                    print("Indexing (the maintenance tick's work)...", file=sys.stderr)
                    t = time.perf_counter()
                    indexed = 0
                    while done := await hub.search.follow():
                        indexed += done
                        print(f"  indexed {indexed:,}", file=sys.stderr, end="\r")
                    spent = time.perf_counter() - t
                    print(file=sys.stderr)
                    report["index_s"] = spent
                    report["indexed_per_s"] = indexed / spent if spent else 0.0
                agent = await _agent(hub)
                print(f"Searching ({args.reps} rounds)...", file=sys.stderr)
                report["figures"] = await measure(hub, agent, args.messages, args.reps)
        finally:
            if args.backend == "postgres":
                cluster.__exit__(None, None, None)
    return report


async def _agent(hub: Hub) -> Peer:
    found = await hub._db.read(lambda r: r.peers.holder("agent-000"))
    assert found is not None
    return found


# --- contention (issue 47): peeks beside heavy searchers -------------------------------------
SEARCHERS = 8
HEAVY = " ".join(f'"{a} {b}"' for a, b in zip(WORDS[0:24:2], WORDS[1:24:2], strict=True))


async def contention(args: argparse.Namespace) -> dict[str, Any]:
    """Quiet peeks, then peeks beside 8 searchers (budgeted, then unbudgeted)."""
    report: dict[str, Any] = {"messages": args.contention_messages, "query": HEAVY}
    with tempfile.TemporaryDirectory(prefix="caucus-contention-") as tmp:
        folder = Path(tmp)
        db = folder / "caucus.db"
        async with make_hub(folder) as hub:
            peers, channels, _ = await setup(hub)
            now = hub.clock.now()
        n = args.contention_messages
        fill_sqlite(db, rows(n, peers, channels, now), n)
        async with make_hub(folder) as hub:  # indexed now, as the maintenance tick would
            while await hub.search.follow():
                pass
        phases: list[tuple[str, dict[str, str], int]] = [
            ("quiet", {}, 0),
            ("8 searchers, budgeted", {}, SEARCHERS),
            ("8 searchers, no rate limit", {"CAUCUS_SEARCH_RATE_CAPACITY": "1e9"}, SEARCHERS),
        ]
        for name, env, searchers in phases:
            print(f"{name}...", file=sys.stderr, flush=True)
            report[name] = await _phase(db, env, searchers, args.peeks)
    quiet = report["quiet"]["p99_ms"]
    for name, _, _ in phases[1:]:
        report[name]["ratio_p99"] = report[name]["p99_ms"] / quiet
    return report


async def _phase(db: Path, env: dict[str, str], searchers: int, peeks: int) -> dict[str, Any]:
    proc, url = relay.start(relay.hub_command(db), {**relay.BENCH_ENV, **env})
    host, port = relay.host_port(url)
    try:
        tag = secrets.token_hex(3)  # each phase registers agents of its own
        peeker = await _token(host, port, f"peeker-{tag}", "127.0.0.2")
        tokens = [
            await _token(host, port, f"searcher-{i}-{tag}", "127.0.0.1") for i in range(searchers)
        ]
        stop = asyncio.Event()
        counts: dict[int, int] = {}
        loads = [asyncio.create_task(_search(host, port, t, stop, counts)) for t in tokens]
        await asyncio.sleep(1.0 if loads else 0)  # the searchers get going
        c = await floods.From(host, port, peeker, local="127.0.0.2").open()
        latencies = []
        for _ in range(peeks):
            t = time.perf_counter()
            status, _ = await c.request("GET", "/peek")
            latencies.append(time.perf_counter() - t)
            assert status == 200
        c.close()
        stop.set()
        await asyncio.gather(*loads)
    finally:
        relay.stop(proc)
    p50, p99 = quantiles(latencies)
    return {"p50_ms": p50 * 1e3, "p99_ms": p99 * 1e3, "searches": dict(sorted(counts.items()))}


async def _token(host: str, port: int, name: str, local: str) -> str:
    c = await floods.From(host, port, local=local).open()
    status, data = await c.request("POST", "/register", json.dumps({"name": name}).encode())
    c.close()
    assert status == 200, data
    token: str = json.loads(data)["token"]
    return token


async def _search(
    host: str, port: int, token: str, stop: asyncio.Event, counts: dict[int, int]
) -> None:
    """Search as fast as the hub lets: honour a refusal's Retry-After (up to 1 s at a time,
    so the phase ends promptly)."""
    from urllib.parse import quote

    c = await relay.Conn(host, port, token).open()
    path = "/search?limit=50&q=" + quote(HEAVY)
    while not stop.is_set():
        status, data = await c.request("GET", path)
        counts[status] = counts.get(status, 0) + 1
        if status in (429, 503):
            wait = float(json.loads(data).get("retry_after", 1.0))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), min(wait, 1.0))
    c.close()


def print_contention(report: dict[str, Any]) -> None:
    print(f"\n/peek beside heavy searchers, {report['messages']:,} messages on SQLite")
    print(f"  query: {report['query']}")
    print(f"  {'phase':30} {'p50 ms':>8} {'p99 ms':>8} {'x quiet':>8}  searches by status")
    for name, f in report.items():
        if not isinstance(f, dict):
            continue
        ratio = f.get("ratio_p99")
        shown = f"{ratio:8.2f}" if ratio is not None else f"{'':8}"
        print(f"  {name:30} {f['p50_ms']:8.2f} {f['p99_ms']:8.2f} {shown}  {f['searches']}")
    worst = report["8 searchers, budgeted"]["ratio_p99"]
    verdict = "within" if worst <= 3 else "over"
    print(f"peek p99 beside budgeted searchers: {worst:.2f}x quiet ({verdict} 3x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=30, help="rounds of every search")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--contention", action="store_true", help="peeks beside heavy searchers (issue 47)"
    )
    parser.add_argument("--contention-messages", type=int, default=40_000)
    parser.add_argument("--peeks", type=int, default=2000, help="peeks per phase")
    args = parser.parse_args()
    if args.contention:
        found = asyncio.run(contention(args))
        if args.json:
            print(json.dumps(found, indent=2))
        else:
            print_contention(found)
        return
    report = asyncio.run(run(args))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"\n{report['messages']:,} messages on {report['backend']}")
    print(f"  stored in {report['store_s']:.1f} s", end="")
    if "index_s" in report:
        rate = report["indexed_per_s"]
        print(f"; indexed in {report['index_s']:.1f} s ({rate:,.0f} messages/s)", end="")
    print()
    print(f"  {'':34} {'hits':>5} {'p50 ms':>8} {'p99 ms':>8} {'x lookup':>9}")
    for name, f in report["figures"].items():
        hits = f.get("hits", "")
        print(
            f"  {name:34} {hits!s:>5} {f['p50_ms']:8.2f} {f['p99_ms']:8.2f} {f['ratio_p50']:9.1f}"
        )


if __name__ == "__main__":
    main()
