"""Chaos: mixed load while `caucus hub` is SIGKILLed every 1-3 s, and a checker of what survived.

Load (all at once, each client retrying through every crash):
- three senders: direct, broadcast and `#chaos` messages in turn, each with an idempotency key,
  retried with the same key until the hub acknowledges it;
- three receivers (members of `#chaos`) long-polling and acknowledging;
- tasks sent to a worker that replies to each; offers posted (and withdrawn) by a poster;
- forms asked by an asker and answered by the operator, onto the decision ledger.

After every kill: `PRAGMA integrity_check` on the database; after every restart: the ledger must
verify (through `/operator/ledger`) within a few seconds, without a person. At the end, a clean
restart, every inbox drained, and the checker reports: acknowledged-but-lost sends, phantoms
(received, never sent), duplicates not flagged as redeliveries, per-sender order violations,
acknowledged tasks, offers and answered forms that are missing, forms recorded twice.

Run: `.venv/bin/python benchmarks/chaos.py --cycles 1000` (docs/reliability.md has figures);
the `chaos` test tier runs 50 cycles.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from caucus.client import HubClient
from caucus.errors import CaucusError, HubUnavailable
from caucus.ledger.tail import newest_first
from caucus.operator_client import OperatorClient

SENDERS = ("s0", "s1", "s2")
RECEIVERS = ("r0", "r1", "r2")
CHANNEL = "#chaos"
FORM = [{"key": "go", "type": "radio", "options": ["yes", "no"]}]
ENV = {
    "CAUCUS_SEND_RATE_CAPACITY": "1000000",
    "CAUCUS_SEND_RATE_REFILL": "1000000",
    "CAUCUS_REGISTER_RATE_CAPACITY": "1000000",
    "CAUCUS_SHIELD_CAPACITY": "1000000",
    "CAUCUS_RESUME_RATE_CAPACITY": "1000000",
    "CAUCUS_OPEN_OFFERS_MAX": "1000",
    "CAUCUS_PENDING_FORMS_MAX": "1000",
    "CAUCUS_VISIBILITY_TIMEOUT": "5",
    "CAUCUS_ANNOUNCE_INTERVAL": "0",
    "CAUCUS_ANNOUNCE_HOURLY": "1000000",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# The hub is restarted hundreds of times; importing Caucus takes seconds of that, so a warm
# parent ("zygote") imports it once and forks each hub process. The child is a real `caucus
# hub`, SIGKILLed like any other; only the start is faster.
ZYGOTE = """
import os, signal, sys
import caucus.cli.main, caucus.server  # the slow imports, once
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # killed children are reaped by the kernel
for line in sys.stdin:
    argv = line.split()
    pid = os.fork()
    if pid == 0:
        sys.stdin.close()
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # the zygote's stderr carries pids
        sys.argv = ["caucus", *argv]
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        try:
            caucus.cli.main.main()
        finally:
            os._exit(0)
    sys.stderr.write(f"{pid}\\n")
    sys.stderr.flush()
"""


class HubProcess:
    def __init__(self, workdir: Path, port: int) -> None:
        self.workdir = workdir
        self.db = workdir / "chaos.db"
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.pid: int | None = None
        env = {**os.environ, **ENV, "CAUCUS_HOME": str(workdir)}
        self.zygote = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )

    def start(self) -> None:
        argv = f"hub --port {self.port} --db {self.db} --json --log-level warning\n"
        zygote = self.zygote
        assert zygote.stdin is not None
        assert zygote.stdout is not None
        assert zygote.stderr is not None
        for _ in range(50):  # the port may linger a moment after a kill
            zygote.stdin.write(argv)
            zygote.stdin.flush()
            self.pid = int(zygote.stderr.readline())
            line = zygote.stdout.readline()
            if line.startswith("{"):
                return
            time.sleep(0.1)
        raise RuntimeError("the hub would not start")

    def _alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def _wait_gone(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self._alive() and time.monotonic() < deadline:
            time.sleep(0.01)

    def kill(self) -> None:
        if self._alive():
            assert self.pid is not None
            os.kill(self.pid, signal.SIGKILL)
            self._wait_gone(30)

    def stop(self) -> None:
        if self._alive():
            assert self.pid is not None
            os.kill(self.pid, signal.SIGTERM)
            self._wait_gone(30)
            self.kill()

    def close(self) -> None:
        self.stop()
        for pipe in (self.zygote.stdin, self.zygote.stdout, self.zygote.stderr):
            if pipe is not None:
                pipe.close()
        self.zygote.wait(timeout=30)


@dataclass
class Record:
    attempted: set[str] = field(default_factory=set)  # contents ever sent (maybe stored)
    acked: dict[str, tuple[int, str]] = field(default_factory=dict)  # content -> (seq, target)
    received: dict[str, list[tuple[int, str, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )  # receiver -> [(seq, content, delivery_count)]
    tasks: set[str] = field(default_factory=set)
    offers: set[str] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)
    integrity_failures: int = 0
    ledger_failures: list[str] = field(default_factory=list)
    retries: int = 0


async def retrying(record: Record, stop: asyncio.Event, call: Any) -> Any:
    """`call()` until the hub answers; None if the run stops first."""
    while not stop.is_set():
        try:
            return await call()
        except HubUnavailable:
            record.retries += 1
            await asyncio.sleep(0.05)
        except CaucusError as exc:
            if exc.status < 500:
                raise
            record.retries += 1
            await asyncio.sleep(0.05)
    return None


async def sender(name: str, client: HubClient, record: Record, stop: asyncio.Event) -> None:
    i = 0
    while not stop.is_set():
        target = (RECEIVERS[i % 3], "all", CHANNEL)[i % 3]
        content = f"{name}|{i}"
        record.attempted.add(content)

        async def send(to: str = target, text: str = content, key: str = content) -> Any:
            return await client.send(to, text, idempotency_key=key)

        result = await retrying(record, stop, send)
        if result is not None:
            record.acked[content] = (result.seq, target)
        i += 1
        await asyncio.sleep(0.01)


async def receiver(name: str, client: HubClient, record: Record, stop: asyncio.Event) -> None:
    while not stop.is_set():
        batch = await retrying(record, stop, lambda: client.receive(timeout=1))
        if batch is None:
            return
        for m in batch.messages:
            if "|" in m.content and m.kind == "chat":
                record.received[name].append((m.seq, m.content, m.delivery_count))


async def tasker(
    sender_: HubClient, worker: HubClient, record: Record, stop: asyncio.Event
) -> None:
    async def work() -> None:
        while not stop.is_set():
            batch = await retrying(record, stop, lambda: worker.receive(timeout=1))
            for m in batch.messages if batch else []:
                task_id = (m.meta or {}).get("task_id")
                if m.kind == "task" and task_id:
                    with contextlib.suppress(CaucusError):
                        await worker.reply_task(task_id, "done")

    working = asyncio.create_task(work())
    n = 0
    while not stop.is_set():
        n += 1
        with contextlib.suppress(CaucusError):
            task = await sender_.send_task("worker", f"task {n}")
            record.tasks.add(task.task_id)
        await asyncio.sleep(0.2)
    await working


async def poster(client: HubClient, record: Record, stop: asyncio.Event) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        with contextlib.suppress(CaucusError):
            offer = await client.post_offer(f"job {n}")
            record.offers.add(offer.offer_id)
            await client.resolve_offer(offer.offer_id, withdraw=True)
        await asyncio.sleep(0.3)


async def forms(asker: HubClient, op: OperatorClient, record: Record, stop: asyncio.Event) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        with contextlib.suppress(CaucusError):
            form = await asker.ask_operator(f"chaos {n}?", FORM)
            await op.answer_form(form.form_id, {"go": "yes"})
            record.answered.add(form.form_id)
        await asyncio.sleep(0.3)


async def _ledger_heals(url: str, token: str, within: float = 15.0) -> str | None:
    deadline = time.monotonic() + within
    last = "no answer"
    async with OperatorClient(url, token=token) as op:
        while time.monotonic() < deadline:
            with contextlib.suppress(CaucusError):
                status = await op.ledger()
                if status.intact and not status.unrecorded_error:
                    return None
                last = status.unrecorded_error or f"broken: {status.broken}"
            await asyncio.sleep(0.2)
    return last


def _integrity(db: Path) -> bool:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def _drain(client: HubClient, name: str, record: Record) -> None:
    """Everything left in the inbox. The receiver comes back as a client reconnecting does
    (register with its token), so a batch the hub handed out just before a kill, whose answer
    never arrived, is delivered again now rather than after its visibility timeout."""
    await client.register(name)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        batch = await client.receive(timeout=1)
        for m in batch.messages:
            if "|" in m.content and m.kind == "chat":
                record.received[name].append((m.seq, m.content, m.delivery_count))
        await client.flush_acks()
        if not batch.messages and (await client.peek()).pending == 0:
            return


async def run(cycles: int, workdir: Path, seed: int, progress: bool = True) -> dict[str, Any]:
    rng = random.Random(seed)
    hub = HubProcess(workdir, free_port())
    hub.start()
    token = (workdir / "operator-token").read_text().strip()
    record = Record()
    clients: dict[str, HubClient] = {}
    names = [*SENDERS, *RECEIVERS, "tasker", "worker", "poster", "asker"]
    for name in names:
        clients[name] = HubClient(hub.url, timeout=10)
        await clients[name].register(name)
    for name in RECEIVERS:
        await clients[name].join_channel(CHANNEL)
    op = OperatorClient(hub.url, token=token, timeout=10)
    stop = asyncio.Event()
    load = [
        *(asyncio.create_task(sender(n, clients[n], record, stop)) for n in SENDERS),
        *(asyncio.create_task(receiver(n, clients[n], record, stop)) for n in RECEIVERS),
        asyncio.create_task(tasker(clients["tasker"], clients["worker"], record, stop)),
        asyncio.create_task(poster(clients["poster"], record, stop)),
        asyncio.create_task(forms(clients["asker"], op, record, stop)),
    ]
    started = time.monotonic()
    down: list[tuple[float, float, float]] = []
    try:
        for cycle in range(1, cycles + 1):
            await asyncio.sleep(rng.uniform(1.0, 3.0))
            hub.kill()
            t0 = time.monotonic()
            if not await asyncio.to_thread(_integrity, hub.db):
                record.integrity_failures += 1
            t1 = time.monotonic()
            await asyncio.to_thread(hub.start)
            t2 = time.monotonic()
            problem = await _ledger_heals(hub.url, token)
            down.append((t1 - t0, t2 - t1, time.monotonic() - t2))
            if problem is not None:
                record.ledger_failures.append(f"cycle {cycle}: {problem}")
            if progress:
                print(
                    f"cycle {cycle}/{cycles}: {len(record.acked)} sends acknowledged, "
                    f"{record.retries} retries; down {sum(down[-1]):.2f} s (check, start, "
                    f"ledger: {', '.join(f'{d:.2f}' for d in down[-1])})",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        stop.set()
        await asyncio.gather(*load, return_exceptions=True)
    hub.stop()
    hub.start()
    try:
        for name in RECEIVERS:
            await _drain(clients[name], name, record)
        report = await _check(record, clients, op, hub.db, cycles, time.monotonic() - started)
    finally:
        for client in clients.values():
            await client.aclose()
        await op.aclose()
        hub.close()
    return report


async def _check(
    record: Record,
    clients: dict[str, HubClient],
    op: OperatorClient,
    db: Path,
    cycles: int,
    elapsed: float,
) -> dict[str, Any]:
    lost = phantom = unflagged = disorder = 0
    for name in RECEIVERS:
        got = record.received[name]
        seen: dict[int, int] = {}
        last_i: dict[str, int] = {}
        for seq, content, count in got:
            if content not in record.attempted:
                phantom += 1
            if seq in seen and count <= seen[seq]:
                unflagged += 1  # a second copy that does not say it is one
            seen[seq] = max(count, seen.get(seq, 0))
            if seen[seq] == count and count == 1:  # first receipt: in order per sender
                who, _, i = content.partition("|")
                if int(i) < last_i.get(who, -1):
                    disorder += 1
                last_i[who] = max(int(i), last_i.get(who, -1))
        for seq, target in record.acked.values():
            if target in (name, "all", CHANNEL) and seq not in seen:
                lost += 1
    missing_tasks = 0
    for task_id in record.tasks:
        try:
            await clients["tasker"].task_status(task_id)
        except CaucusError:
            missing_tasks += 1
    with contextlib.closing(sqlite3.connect(db)) as conn:  # the board lists 200 at most
        offers = {row[0] for row in conn.execute("SELECT id FROM offers")}
    missing_offers = len(record.offers - offers)
    ledger = await op.ledger()
    recorded: dict[str, int] = defaultdict(int)
    for entry in newest_first(Path(ledger.path)):
        form_id = (entry.get("caucus") or {}).get("form_id")
        if form_id:
            recorded[form_id] += 1
    missing_forms = [f for f in record.answered if f not in recorded]
    return {
        "cycles": cycles,
        "seconds": round(elapsed, 1),
        "sends_acknowledged": len(record.acked),
        "deliveries_received": sum(len(v) for v in record.received.values()),
        "client_retries": record.retries,
        "acked_but_lost": lost,
        "phantoms": phantom,
        "duplicates_not_flagged": unflagged,
        "order_violations": disorder,
        "integrity_failures": record.integrity_failures,
        "ledger_failures": len(record.ledger_failures),
        "ledger_failure_detail": record.ledger_failures[:5],
        "ledger_records": ledger.records,
        "ledger_intact": ledger.intact,
        "tasks_acknowledged": len(record.tasks),
        "tasks_missing": missing_tasks,
        "offers_acknowledged": len(record.offers),
        "offers_missing": missing_offers,
        "forms_answered": len(record.answered),
        "forms_unrecorded": len(missing_forms),
        "forms_recorded_twice": sum(1 for n in recorded.values() if n > 1),
    }


FAILURES = (
    "acked_but_lost",
    "phantoms",
    "duplicates_not_flagged",
    "order_violations",
    "integrity_failures",
    "ledger_failures",
    "tasks_missing",
    "offers_missing",
    "forms_unrecorded",
    "forms_recorded_twice",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="caucus-chaos-") as tmp:
        report = asyncio.run(run(args.cycles, Path(tmp), args.seed))
    if args.json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key:24} {value}")
    failed = [k for k in FAILURES if report[k]]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
