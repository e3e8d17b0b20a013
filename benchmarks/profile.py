"""Where a relayed message's CPU goes: the hub under py-spy while relay.py's closed loop runs.

Starts `caucus hub` as `benchmarks/relay.py` does, drives its closed loop (N pairs) for a
warm-up, then samples the hub with py-spy (installed from PyPI into `.cache/` on first use; it
reads the process from outside, so the hub runs as it always does) for `--seconds` while the
loop goes on, reading the hub's CPU time from /proc over the same window. It prints, per
thread, how the samples split between the layers — the HTTP server (uvicorn, httptools), the
framework (Starlette, FastAPI), JSON and pydantic, SQLite with our storage layer, our own code
(by package), and the event loop (uvloop's C loop with the socket I/O it does) — and the CPU
per message each share stands for. A frame's time is its own: a C call (a SQLite statement, a
socket write) counts where Python called it.

Run: `.venv/bin/python benchmarks/profile.py` (`--pairs 16 --seconds 10`, `--folded F` keeps
py-spy's raw stacks for a flame graph).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import linecache
import re
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import relay

PY_SPY = "py-spy==0.4.3"
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "bench" / "py-spy"
_FILE = re.compile(r"\(([^:()]+):(\d+)\)$")
# A line that blocks until work comes (a queue's get): py-spy may sample it as running.
_WAIT = re.compile(r"\.get\(\)|\.wait\(|\.acquire\(")
_THREAD = re.compile(r"^thread \(\d+\): (.+)$")


def py_spy() -> Path:
    """py-spy, installed on first use into its own environment (a tool, not a dependency)."""
    binary = CACHE / "bin" / "py-spy"
    if not binary.exists():
        print(f"installing {PY_SPY} into {CACHE} (once)...", file=sys.stderr, flush=True)
        venv.create(CACHE, with_pip=True, clear=True)
        pip = [str(CACHE / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--disable-pip-version-check", PY_SPY], check=True)
    return binary


def layer(frame: str) -> str:
    found = _FILE.search(frame)
    path = found.group(1) if found else frame
    if path.startswith("caucus/storage"):
        return "SQLite + storage layer"
    if path.startswith(("json/", "pydantic", "pydantic_core")):
        return "JSON + pydantic"
    if path.startswith(("uvicorn/", "httptools", "h11")):
        return "HTTP server (uvicorn)"
    if path.startswith(("starlette/", "fastapi/")):
        return "framework (Starlette, FastAPI)"
    if path.startswith(("asyncio/", "uvloop", "concurrent/", "threading", "queue", "selectors")):
        return "event loop (uvloop, socket I/O)"
    if path.startswith("caucus/"):
        return f"caucus/{path.split('/')[1].removesuffix('.py')}"
    return "other"


def waiting(frame: str) -> bool:
    """Whether the frame's line is a wait for work (its source, found on sys.path)."""
    found = _FILE.search(frame)
    if found is None:
        return False
    for root in sys.path:
        source = Path(root) / found.group(1)
        if source.is_file():
            return bool(_WAIT.search(linecache.getline(str(source), int(found.group(2)))))
    return False


def breakdown(folded: Path) -> tuple[dict[str, collections.Counter[str]], int]:
    """thread -> layer -> samples, from py-spy's raw output (stacks joined by ';'), and the
    samples left out as waits."""
    threads: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    waits = 0
    for line in folded.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if waiting(frames[-1]):
            waits += int(count)
            continue
        named = _THREAD.match(frames[0])
        thread = named.group(1) if named else "?"
        threads[thread][layer(frames[-1])] += int(count)
    return threads, waits


async def keep_relaying(
    url: str, pairs: int, stop_at: float, offered: float | None
) -> relay.Result:
    return await relay.relay_run(url, pairs, stop_at - time.perf_counter(), offered, run=7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=16, help="sender/receiver pairs")
    parser.add_argument("--seconds", type=float, default=10.0, help="sampling window")
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--folded", type=Path, help="keep py-spy's raw stacks here")
    parser.add_argument(
        "--offered", type=float, help="messages/s in all (an open loop; default: closed)"
    )
    parser.add_argument(
        "--postgres", action="store_true", help="the hub on a throwaway PostgreSQL cluster"
    )
    args = parser.parse_args()
    spy = py_spy()
    tmp = Path(tempfile.mkdtemp(prefix="caucus-profile-"))
    folded = args.folded or tmp / "hub.folded"
    env = {**relay.BENCH_ENV, "CAUCUS_HOME": str(tmp)}
    with contextlib.ExitStack() as stack:
        db = str(tmp / "bench.db")
        if args.postgres:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
            from caucus.testing.postgres import fresh_database, throwaway_cluster

            db = fresh_database(stack.enter_context(throwaway_cluster(durable=True)), "profile")
        hub, url = relay.start(relay.hub_command(db), env)
        stack.callback(relay.stop, hub)
        result, cpu, window = sample(spy, hub.pid, url, args, folded)
    report(result, cpu, window, args, folded)


def sample(
    spy: Path, pid: int, url: str, args: argparse.Namespace, folded: Path
) -> tuple[relay.Result, float, float]:
    """The relay's loop on the hub at `url` while py-spy samples it: its result, the hub's
    CPU seconds over the window and the window's length."""
    asyncio.run(relay.relay_run(url, args.pairs, 2.0, None, run=0))  # warm up

    async def sampled() -> tuple[relay.Result, float, float]:
        stop_at = time.perf_counter() + args.seconds + 2.0
        loop = asyncio.create_task(keep_relaying(url, args.pairs, stop_at, args.offered))
        await asyncio.sleep(1.0)  # the loop is under way before sampling starts
        cpu_before = relay.process_cpu(pid)
        spying = await asyncio.create_subprocess_exec(
            str(spy),
            *("record", "--pid", str(pid), "--duration", str(int(args.seconds))),
            *("--rate", str(args.rate), "--nonblocking", "--threads", "--format", "raw"),
            *("--output", str(folded)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        await spying.wait()
        cpu = relay.process_cpu(pid) - cpu_before
        result = await loop
        return result, cpu, float(int(args.seconds))

    return asyncio.run(sampled())


def report(
    result: relay.Result, cpu: float, window: float, args: argparse.Namespace, folded: Path
) -> None:
    per_message_us = cpu / (result.rate * window) * 1e6
    threads, waits = breakdown(folded)
    print(
        f"\nhub under the relay's {'open' if args.offered else 'closed'} loop: {args.pairs} "
        f"pairs, {result.rate:.0f} msgs/s, "
        f"{cpu / window:.0%} of a core, {per_message_us:.0f} us of hub CPU per message "
        f"(all threads; sampling slows it somewhat)\n"
    )
    total = sum(sum(c.values()) for c in threads.values())
    print(
        f"({waits} samples of a thread blocked on a queue left out; uvloop's share also holds "
        "what its C loop spends in epoll between events)\n"
    )
    for thread, layers in sorted(threads.items(), key=lambda kv: -sum(kv[1].values())):
        samples = sum(layers.values())
        print(f"thread {thread}: {samples / total:.0%} of the samples")
        for name, n in layers.most_common():
            share = n / total
            print(f"  {share:6.1%}  {share * per_message_us:6.0f} us/msg  {name}")
    print(f"\nraw stacks: {folded}")


if __name__ == "__main__":
    main()
