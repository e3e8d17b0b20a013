"""Retention's cost to sends: a legit pair's send->receive p99 while the maintenance loop purges
a week of traffic, beside the same pair on the same database with nothing to purge, in one run;
and the database's size before and after.

1. A database is filled with a week of simulated traffic (an in-process hub on a fake clock:
   acknowledged messages, ended tasks, answered forms; a few unacknowledged messages kept).
2. `caucus hub` serves it with a retention age no message is past: the quiet baseline.
3. `caucus hub` serves it again with a 1-day retention age and a small size bound: the
   maintenance loop purges in bounded batches while the pair keeps sending.
Run: `.venv/bin/python benchmarks/retention.py` (`--quick` for a smaller week).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import relay
from caucus.testing import FakeClock, make_hub

DAY = 86400.0


async def fill(folder: Path, per_hour: int) -> int:
    """A week of traffic ending now; returns how many messages were sent."""
    start = time.time() - 7 * DAY
    clock = FakeClock(start)
    sent = 0
    async with make_hub(folder, clock=clock, send_rate_capacity=1e9, send_rate_refill=1e9) as hub:
        alice = (await hub.principals.register(name="alice")).peer
        bob = (await hub.principals.register(name="bob")).peer
        for hour in range(7 * 24):
            for n in range(per_hour):
                await hub.delivery.send(alice, to="bob", content=f"{hour}/{n} " + "x" * 900)
                sent += 1
            while got := (await hub.delivery.receive(bob, wait=0)).deliveries:
                await hub.delivery.ack(bob, through=got[-1].message.seq)
            clock.advance(3600)
    return sent


async def pair_p99(url: str, seconds: float, run: int) -> relay.Result:
    return await relay.relay_run(url, 2, seconds, 40.0, run)


def file_mb(db: Path) -> float:
    total = sum(os.path.getsize(p) for p in (db, Path(f"{db}-wal")) if p.exists())
    return total / 1_048_576


def serve(db: Path, env: dict[str, str]) -> tuple[object, str]:
    base = {
        "CAUCUS_HOME": str(db.parent),
        "CAUCUS_SEND_RATE_CAPACITY": "1000000",
        "CAUCUS_SEND_RATE_REFILL": "1000000",
        # A benchmark registers its agents from one address at once: the flood budgets
        # (issue 12) are for strangers, not for the load it measures.
        "CAUCUS_REGISTER_RATE_CAPACITY": "1000000",
        "CAUCUS_RESUME_RATE_CAPACITY": "1000000",
        "CAUCUS_STRANGER_RATE": "1000000",
        "CAUCUS_STRANGER_BURST": "1000000",
        "CAUCUS_MAINTENANCE_INTERVAL": "0.5",
        **env,
    }
    cmd = [sys.executable, "-m", "caucus", "hub", "--port", "0", "--db", str(db), "--json"]
    return relay.start(cmd, env=base)


async def main_async(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="caucus-retention-"))
    print("filling a week of traffic...", file=sys.stderr, flush=True)
    sent = await fill(folder, 20 if args.quick else 100)
    db = folder / "caucus.db"
    before = file_mb(db)
    proc, url = serve(db, {"CAUCUS_RETENTION_AGE": str(365 * DAY)})
    try:
        print("baseline (nothing to purge)...", file=sys.stderr, flush=True)
        quiet = await pair_p99(url, args.seconds, 1)
    finally:
        relay.stop(proc)
    bound = 4 * 1_048_576
    env = {"CAUCUS_RETENTION_AGE": str(DAY), "CAUCUS_RETENTION_MAX_BYTES": str(bound)}
    proc, url = serve(db, env)
    try:
        print("while the maintenance loop purges...", file=sys.stderr, flush=True)
        purging = await pair_p99(url, args.seconds, 2)
    finally:
        relay.stop(proc)
    after = file_mb(db)
    print(f"database: {sent} messages over a week, {before:.1f} MB -> {after:.1f} MB")
    print(f"{'':22} {'p50':>9} {'p99':>9}")
    print(f"{'no purge':22} {quiet.pct(50):7.2f}ms {quiet.pct(99):7.2f}ms")
    print(f"{'purging':22} {purging.pct(50):7.2f}ms {purging.pct(99):7.2f}ms")
    print(f"p99 while purging: {purging.pct(99) / quiet.pct(99):.2f}x the baseline")
    print(
        json.dumps(
            {
                "messages": sent,
                "mb_before": round(before, 1),
                "mb_after": round(after, 1),
                "p99_quiet_ms": round(quiet.pct(99), 2),
                "p99_purging_ms": round(purging.pct(99), 2),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seconds", type=float, default=10.0)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
