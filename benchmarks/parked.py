"""What a parked agent costs the hub: N agents long-polling at once, RSS per agent.

Starts `caucus hub` (a fresh SQLite file), registers N agents, and parks every one of them in
a `GET /receive` long-poll from this one process, each on its own HTTP/1.1 keep-alive
connection (as N agents on N hosts would hold them). It reads the hub's resident memory
(/proc, VmRSS) three times: started and idle (warmed up, and once its RSS stops growing); with
the N agents registered and their connections open but nothing parked; with all N parked
(confirmed by the operator snapshot's `listening` count). The figure is the growth per agent
from the first reading to the last, and the part of it the parking itself adds (from the second).

Run: `.venv/bin/python benchmarks/parked.py` (`--agents 10000`; the target is 15 KB each).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import relay

TARGET_KB = 15.0


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


async def register_all(url: str, n: int, width: int = 64, prefix: str = "parked") -> list[str]:
    host, port = relay.host_port(url)
    conns = [await relay.Conn(host, port).open() for _ in range(width)]
    tokens: list[str] = [""] * n

    async def worker(k: int, c: relay.Conn) -> None:
        for i in range(k, n, width):
            body = json.dumps({"name": f"{prefix}-{i}"}).encode()
            status, data = await c.request("POST", "/register", body)
            assert status == 200, data
            tokens[i] = json.loads(data)["token"]

    await asyncio.gather(*(worker(k, c) for k, c in enumerate(conns)))
    for c in conns:
        c.close()
    return tokens


async def listening(url: str, operator: str) -> int:
    host, port = relay.host_port(url)
    c = await relay.Conn(host, port, operator).open()
    try:
        status, data = await c.request("GET", "/operator/snapshot")
        assert status == 200, data[:200]
        return int(json.loads(data)["health"]["listening"])
    finally:
        c.close()


async def warm_up(url: str, operator: str) -> None:
    """One agent's register and receive and the operator's snapshot, before `idle` is read:
    the hub loads what it serves on first use (a fast start, ADR 0037), which is no agent's."""
    host, port = relay.host_port(url)
    token = (await register_all(url, 1, width=1, prefix="warm"))[0]
    c = await relay.Conn(host, port, token).open()
    try:
        status, data = await c.request("GET", "/receive?timeout=0")
        assert status == 200, data[:200]
    finally:
        c.close()
    await listening(url, operator)


async def settled(pid: int, *, within: float = 30.0) -> int:
    """The hub's RSS once it stops growing: what it loads on first use includes its first
    maintenance round's modules (a few seconds after start), which are no agent's either."""
    last, steady, deadline = rss_bytes(pid), 0, time.monotonic() + within
    while steady < 3 and time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        now = rss_bytes(pid)
        steady = steady + 1 if now - last < 256 * 1024 else 0
        last = now
    return last


async def measure(url: str, pid: int, home: Path, n: int, timeout: float) -> dict[str, float]:
    operator = (home / "operator-token").read_text().strip()
    await warm_up(url, operator)
    idle = await settled(pid)
    print(f"registering {n} agents...", file=sys.stderr, flush=True)
    tokens = await register_all(url, n)
    host, port = relay.host_port(url)
    print(f"opening {n} connections...", file=sys.stderr, flush=True)
    conns = []
    for i in range(0, n, 500):
        conns += await asyncio.gather(
            *(relay.Conn(host, port, t).open() for t in tokens[i : i + 500])
        )
    registered = rss_bytes(pid)
    print(f"parking {n} long-polls...", file=sys.stderr, flush=True)
    polls = [asyncio.create_task(c.request("GET", f"/receive?timeout={timeout:g}")) for c in conns]
    started = time.perf_counter()
    parked = 0
    while parked < n:
        if time.perf_counter() - started > timeout / 2:
            raise SystemExit(f"only {parked} of {n} parked after {timeout / 2:g} s")
        await asyncio.sleep(0.5)
        parked = await listening(url, operator)
    await asyncio.sleep(1.0)  # let anything the parking allocated settle
    loaded = rss_bytes(pid)
    for task in polls:
        task.cancel()
    await asyncio.gather(*polls, return_exceptions=True)
    for c in conns:
        c.close()
    return {"idle": idle, "registered": registered, "parked": loaded, "count": parked}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10_000, help="agents to park")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.agents + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    timeout = 240.0
    tmp = Path(tempfile.mkdtemp(prefix="caucus-parked-"))
    env = {
        **relay.BENCH_ENV,
        "CAUCUS_HOME": str(tmp),
        # Every parked agent holds a connection and a stream: the room's caps on both (kept
        # an eighth below the connections, issue 47) are raised past the agents it parks.
        "CAUCUS_MAX_CONNECTIONS": str(args.agents * 8 // 7 + 512),
        "CAUCUS_STREAMS_ROOM_MAX": str(args.agents + 64),
        "CAUCUS_PEERS_MAX": str(args.agents + 16),
        "CAUCUS_RECEIVE_TIMEOUT_MAX": str(int(timeout)),
    }
    hub, url = relay.start(relay.hub_command(tmp / "bench.db"), env)
    try:
        figures = asyncio.run(measure(url, hub.pid, tmp, args.agents, timeout))
    finally:
        relay.stop(hub)
    n = figures["count"]
    per_agent = (figures["parked"] - figures["idle"]) / n / 1024
    parking = (figures["parked"] - figures["registered"]) / n / 1024
    result = {
        "agents": n,
        "rss_idle_mb": round(figures["idle"] / 2**20, 1),
        "rss_registered_mb": round(figures["registered"] / 2**20, 1),
        "rss_parked_mb": round(figures["parked"] / 2**20, 1),
        "kb_per_agent": round(per_agent, 2),
        "kb_per_parked_poll": round(parking, 2),
        "target_kb_per_agent": TARGET_KB,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"\n{n} agents parked in GET /receive, one keep-alive connection each\n")
    print(f"  hub RSS idle                 {result['rss_idle_mb']:8.1f} MB")
    print(f"  registered, connections open {result['rss_registered_mb']:8.1f} MB")
    print(f"  every one parked             {result['rss_parked_mb']:8.1f} MB")
    print(f"  per agent (idle -> parked)   {per_agent:8.2f} KB   target <= {TARGET_KB:g} KB")
    print(f"  of which the parked poll     {parking:8.2f} KB")
    print(f"\n{'within' if per_agent <= TARGET_KB else 'OUTSIDE'} target")


if __name__ == "__main__":
    main()
