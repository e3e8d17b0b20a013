"""How fast each `caucus` entry point is ready, beside `python -c pass`, in one run.

A host waits for `caucus bridge` before it shows Caucus's tools (Gemini CLI gives up after
5 s), and a person waits for every command. This prints, for each: the cold start (the page
cache dropped first, when this runs as root; otherwise the first run), the median of the warm
starts after it, and both as ratios to `python -c pass` measured the same way in the same run:

- `python -c pass` (the baseline), `caucus --version` and `caucus --help`
- `caucus bridge` until it has answered `initialize` and `tools/list`
- `caucus watch` until it has printed a message that was waiting for it, and exited
- `caucus hub` until `GET /protocol` answers

`caucus hub` is timed to the answer, not to its stop. Run: `.venv/bin/python
benchmarks/startup.py [--runs 5]`. Issue 30's goals: the bridge under 0.5 s cold (under 10x
`python -c pass`), `caucus --version` under 0.3 s; issue 50's: `caucus --version` and `--help`
within 3x `python -c pass`, `caucus hub` serving `/protocol` within 1.5 s on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from caucus.client import HubClient
from caucus.mcp.watch import Session, write_session
from caucus.testing import make_hub, serve

PYTHON = sys.executable
# The `caucus` a user runs (the console script beside this Python), else `python -m caucus`.
SCRIPT = Path(PYTHON).parent / "caucus"
CAUCUS = [str(SCRIPT)] if SCRIPT.exists() else [PYTHON, "-m", "caucus"]


def drop_caches() -> bool:
    """Empty the page cache, so the next start reads its files from disk (root only)."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def timed(start: Callable[[], float | None]) -> float:
    """Seconds until `start` returns, or until the moment it says (what follows, such as
    stopping what it started, is not the start's)."""
    began = time.perf_counter()
    ready = start()
    return (ready if ready is not None else time.perf_counter()) - began


def python_pass() -> None:
    subprocess.run([PYTHON, "-c", "pass"], check=True)


def version() -> None:
    subprocess.run([*CAUCUS, "--version"], check=True, capture_output=True)


def help_text() -> None:
    subprocess.run([*CAUCUS, "--help"], check=True, capture_output=True)


def bridge(hub: str, env: dict[str, str]) -> Callable[[], None]:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "startup-bench", "version": "1"},
        },
    }
    listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}

    def start() -> None:
        proc = subprocess.Popen(
            [*CAUCUS, "bridge", "--hub", hub],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(json.dumps(init).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        for message in (initialized, listed):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        assert "tools" in json.loads(proc.stdout.readline())["result"]
        proc.stdin.close()
        proc.wait()

    return start


def watch(session: Path, send: Callable[[], None], env: dict[str, str]) -> Callable[[], None]:
    def start() -> None:
        send()
        done = subprocess.run(
            [*CAUCUS, "watch", "--session", str(session)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    return start


def hub(folder: Path, env: dict[str, str]) -> Callable[[], float]:
    def start() -> float:
        db = Path(tempfile.mkdtemp(dir=folder)) / "hub.db"
        proc = subprocess.Popen(
            [*CAUCUS, "hub", "--port", "0", "--db", str(db), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**env, "CAUCUS_HOME": str(db.parent)},
        )
        assert proc.stdout is not None
        url = json.loads(proc.stdout.readline())["url"]
        with urllib.request.urlopen(f"{url}/protocol", timeout=30) as answer:  # noqa: S310
            assert answer.status == 200
            answered = time.perf_counter()
        proc.terminate()
        proc.wait()
        return answered

    return start


def measure(start: Callable[[], float | None], runs: int) -> tuple[float, float]:
    """(cold, median warm) seconds."""
    drop_caches()
    cold = timed(start)
    warm = statistics.median(timed(start) for _ in range(runs))
    return cold, warm


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="caucus-startup-") as where:
        await measure_all(Path(where), runs)


async def measure_all(folder: Path, runs: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAUCUS_")}
    env.update(XDG_STATE_HOME=str(folder / "state"), XDG_RUNTIME_DIR=str(folder / "run"))
    async with make_hub(folder / "hub") as live, serve(live) as url, HubClient(url) as alice:
        await alice.register("alice")
        bob = HubClient(url)
        await bob.register("bob")
        key = await bob.mint_watch_key()
        session = folder / "bob.session"
        write_session(session, Session(url, "bob", key.key))
        loop = asyncio.get_running_loop()

        def send() -> None:
            asyncio.run_coroutine_threadsafe(alice.send("bob", "wake up"), loop).result(30)

        cases = [
            ("python -c pass", python_pass),
            ("caucus --version", version),
            ("caucus --help", help_text),
            ("caucus bridge -> tools/list", bridge(url, env)),
            ("caucus watch -> a message", watch(session, send, env)),
            ("caucus hub -> /protocol", hub(folder, env)),
        ]
        cold_note = "cold (page cache dropped)" if drop_caches() else "cold (first run)"
        print(f"{'entry point':30} {cold_note:>26} {'warm (median of ' + str(runs) + ')':>20}")
        base: tuple[float, float] | None = None
        for name, start in cases:
            cold, warm = await asyncio.to_thread(measure, start, runs)
            base = base or (cold, warm)
            print(
                f"{name:30} {cold * 1000:>13.0f} ms {cold / base[0]:>6.1f}x"
                f" {warm * 1000:>10.0f} ms {warm / base[1]:>6.1f}x"
            )
        await bob.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="warm runs per entry point")
    asyncio.run(main(parser.parse_args().runs))
