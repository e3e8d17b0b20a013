"""Durable relay vs a bare endpoint, over real HTTP, measured in the same run.

Starts `caucus hub` (a fresh SQLite file, synchronous=FULL) and a bare Starlette POST endpoint
(parse the JSON body, answer JSON, no relay) served by the same uvicorn setup, each in its own
process, and drives both from this process with a lean keep-alive HTTP/1.1 client:

1. throughput: N sender/receiver pairs as fast as they go (relay: messages/s delivered to
   receivers; bare: requests/s answered);
2. latency at an offered rate (default 500/s, open loop, measured from the scheduled send time so
   a stall is not hidden): relay send->receive p50/p99, bare request->response p50/p99;
3. low rate: `--slow-agents` (100) senders at 2 messages/s each, nothing to batch.

Hub CPU is read from /proc while the messages flow (registering and connecting left out). The
targets (issue 53): the relay's CPU per message at most 4x the bare endpoint's per request, and
the low-rate CPU per message at most 2x the closed loop's. A relayed message costs two requests
at least (a send and its share of a receive), so the throughput ceiling is about 0.5x bare.
Phases alternate bare and relay `--reps` times and the figures are medians (a ratio is the
median of each rep's own): a shared machine's drift then moves both sides of a ratio alike.
Run: `./dev bench` (or `--quick`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TARGET_CPU_RATIO = 4.0  # hub CPU per relayed message / bare CPU per request (issue 53)
TARGET_SLOW_RATIO = 2.0  # CPU per message at 2 msgs/s an agent / in the closed loop
TARGET_P99_MS = 5.0


# --- a trivial endpoint, served the way the hub is ------------------------------------------
def serve_trivial() -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    # The canonical trivial Starlette POST endpoint: read the JSON body, answer JSON (as
    # DESIGN.md section 7's "plain Starlette handler for a 200-byte POST").
    async def echo(request: Request) -> JSONResponse:
        body = await request.json()
        return JSONResponse({"ok": True, "to": body.get("to")})

    app = Starlette(routes=[Route("/echo", echo, methods=["POST"])])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(json.dumps({"url": f"http://127.0.0.1:{sock.getsockname()[1]}"}), flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


# --- a lean HTTP/1.1 keep-alive client: the load generator must not be the bottleneck ------
class Conn:
    def __init__(self, host: str, port: int, token: str | None = None) -> None:
        self.host, self.port = host, port
        self.auth = f"Authorization: Bearer {token}\r\n".encode() if token else b""
        self.reader: asyncio.StreamReader
        self.writer: asyncio.StreamWriter

    async def open(self) -> Conn:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        ).encode()
        self.writer.write(head + self.auth + b"\r\n" + body)
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("server closed the connection")
        status = int(status_line[9:12])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


def host_port(url: str) -> tuple[str, int]:
    rest = url.split("://", 1)[1]
    host, port = rest.rsplit(":", 1)
    return host, int(port)


# --- processes ---------------------------------------------------------------------------
def start(cmd: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        raise SystemExit(f"failed to start: {' '.join(cmd)}")
    return proc, json.loads(line)["url"]


BENCH_ENV = {
    "CAUCUS_SEND_RATE_CAPACITY": "1000000",
    "CAUCUS_SEND_RATE_REFILL": "1000000",
    # A benchmark registers its agents from one address at once: the flood budgets (issue 12)
    # are for strangers, not for the load it measures.
    "CAUCUS_REGISTER_RATE_CAPACITY": "1000000",
    "CAUCUS_RESUME_RATE_CAPACITY": "1000000",
    "CAUCUS_STRANGER_RATE": "1000000",
    "CAUCUS_STRANGER_BURST": "1000000",
    # Each phase registers its own agents: a long run would fill the room (peers_max).
    "CAUCUS_PEERS_MAX": "1000000",
    "CAUCUS_LOG_LEVEL": "warning",
}


def hub_command(db: Path | str) -> list[str]:
    """`caucus hub` on an ephemeral port, printing its URL as JSON, on `db` (a SQLite file or
    a postgresql:// DSN)."""
    return [sys.executable, "-m", "caucus", "hub", "--port", "0", "--json", "--db", str(db)]


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


# --- measurements --------------------------------------------------------------------------
@dataclass
class Result:
    rate: float  # operations per second
    latencies_ms: list[float] = field(default_factory=list)
    busy: float = float("nan")  # the machine's CPU in use meanwhile, 0-1, where measured
    cpu_us: float = float("nan")  # the server process's CPU per operation, microseconds
    client_cpu_us: float = float("nan")  # the load generator's (this process's), likewise
    count: int = 0  # operations the server did in the run (its tail included)
    backend_cpu_us: float = 0.0  # PostgreSQL's backends per operation (scaleout.py)
    server_cpu_us: float = 0.0  # PostgreSQL's own processes per operation (scaleout.py)
    backends: int = 0
    settling_ms: list[float] = field(default_factory=list)  # `relay_run(settle=...)`'s

    def pct(self, p: float, *, settling: bool = False) -> float:
        """The `p`th percentile latency (with `settling`, those of the first seconds too)."""
        data = sorted(self.latencies_ms + (self.settling_ms if settling else []))
        if not data:
            return float("nan")
        return data[min(len(data) - 1, int(p / 100 * len(data)))]


PAD = "x" * 140  # a ~200-byte request body, like a short agent message


async def trivial_run(url: str, conns: int, duration: float, rate: float | None) -> Result:
    host, port = host_port(url)
    clients = [await Conn(host, port).open() for _ in range(conns)]
    body = json.dumps({"to": "peer", "content": PAD}).encode()
    done = 0
    lat: list[float] = []
    start = time.perf_counter()
    end = start + duration

    async def worker(i: int, c: Conn) -> None:
        nonlocal done
        interval = conns / rate if rate else 0.0
        scheduled = start + i * (interval / conns if rate else 0)
        while True:
            if rate:
                now = time.perf_counter()
                if scheduled > now:
                    await asyncio.sleep(scheduled - now)
            if time.perf_counter() >= end:
                return
            t0 = scheduled if rate else time.perf_counter()
            status, _ = await c.request("POST", "/echo", body)
            assert status == 200
            lat.append((time.perf_counter() - t0) * 1000)
            done += 1
            scheduled += interval

    await asyncio.gather(*(worker(i, c) for i, c in enumerate(clients)))
    elapsed = time.perf_counter() - start
    for c in clients:
        c.close()
    return Result(done / elapsed, lat, count=done)


async def receive_loop(
    c: Conn,
    stop: asyncio.Event,
    got: Callable[[list[dict[str, Any]], float], Awaitable[None]],
) -> None:
    """An agent's receive loop until `stop`: long-polls, each acknowledging the batch before
    it; `got(messages, when it came)` for every answer."""
    ack = None
    while not stop.is_set():
        path = "/receive?timeout=1" + (f"&ack={ack}" if ack is not None else "")
        status, data = await c.request("GET", path)
        assert status == 200, data
        now = time.perf_counter()
        messages = json.loads(data)["messages"]
        await got(messages, now)
        if messages:
            ack = messages[-1]["seq"]


async def register(url: str, name: str) -> str:
    host, port = host_port(url)
    c = await Conn(host, port).open()
    status, data = await c.request("POST", "/register", json.dumps({"name": name}).encode())
    c.close()
    assert status == 200, data
    token: str = json.loads(data)["token"]
    return token


async def relay_run(
    url: str,
    pairs: int,
    duration: float,
    rate: float | None,
    run: int,
    *,
    spread: list[str] | None = None,
    pid: int | None = None,
    window: Callable[[], object] | None = None,
    settle: float = 0.0,
) -> Result:
    """N sender/receiver pairs, closed loop (or open at `rate`). With `spread` (hubs sharing a
    database), pair i sends on hub i and receives on hub i+1. With `pid`, the CPU that process
    spends per message while they flow (registration and connecting left out); `window` is
    called as they start to flow and once they end, for a caller's own readings. Messages sent
    in the first `settle` seconds count, but not their latencies."""
    hubs = spread or [url]
    names = [(f"s{run}-{i}", f"r{run}-{i}") for i in range(pairs)]
    where = {n: hubs[(i + (n[0] == "r")) % len(hubs)] for i, pair in enumerate(names) for n in pair}
    tokens = {n: await register(where[n], n) for pair in names for n in pair}

    async def conn(name: str) -> Conn:
        host, port = host_port(where[name])
        return await Conn(host, port, tokens[name]).open()

    senders = [await conn(s) for s, _ in names]
    receivers = [await conn(r) for _, r in names]
    lat: list[float] = []
    settling: list[float] = []
    received = every = 0
    start = time.perf_counter()
    end = start + duration
    stop_receiving = asyncio.Event()

    async def sender(i: int, c: Conn, to: str) -> None:
        interval = pairs / rate if rate else 0.0
        scheduled = start + (i * interval / pairs if rate else 0)
        while True:
            if rate:
                now = time.perf_counter()
                if scheduled > now:
                    await asyncio.sleep(scheduled - now)
            if time.perf_counter() >= end:
                return
            t0 = scheduled if rate else time.perf_counter()
            body = json.dumps({"to": to, "content": f"{t0:.6f}|{PAD}"}).encode()
            status, data = await c.request("POST", "/send", body)
            assert status == 200, data
            scheduled += interval

    async def got(messages: list[dict[str, Any]], now: float) -> None:
        nonlocal received, every
        for m in messages:
            sent = float(m["content"].split("|", 1)[0])
            if sent >= start + settle:
                lat.append((now - sent) * 1000)
            elif sent >= start:
                settling.append((now - sent) * 1000)
        every += len(messages)
        if now <= end:
            received += len(messages)

    async def receiver(c: Conn) -> None:
        await receive_loop(c, stop_receiving, got)

    receiving = [asyncio.create_task(receiver(c)) for c in receivers]
    cpu_before, mine = (process_cpu(pid) if pid else 0.0), time.process_time()
    if window is not None:
        window()
    await asyncio.gather(
        *(sender(i, c, r) for i, (c, (_, r)) in enumerate(zip(senders, names, strict=True)))
    )
    await asyncio.sleep(0.5)  # let the last messages land
    stop_receiving.set()
    await asyncio.gather(*receiving)
    if window is not None:
        window()
    result = Result((received / (min(time.perf_counter(), end) - start)), lat, count=every)
    result.settling_ms = settling
    if pid and every:
        result.cpu_us = (process_cpu(pid) - cpu_before) / every * 1e6
        result.client_cpu_us = (time.process_time() - mine) / every * 1e6
    for c in senders + receivers:
        c.close()
    return result


def fmt(r: Result) -> str:
    return f"{r.rate:9.0f}/s   p50 {r.pct(50):7.2f} ms   p99 {r.pct(99):7.2f} ms"


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, all its threads (Linux)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def timed(pid: int, run: Any) -> Result:
    """`run` (a coroutine giving a Result) with the CPU the process `pid` spent per operation:
    a measure a shared machine's drift moves far less than throughput."""
    before, mine = process_cpu(pid), time.process_time()
    result: Result = await run
    spent, used = process_cpu(pid) - before, time.process_time() - mine
    if result.count > 0:
        result.cpu_us = spent / result.count * 1e6
        result.client_cpu_us = used / result.count * 1e6
    return result


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def middle(results: list[Result]) -> Result:
    """The rep whose rate is the median's (its latencies with it)."""
    ordered = sorted(results, key=lambda r: r.rate)
    return ordered[(len(ordered) - 1) // 2]


async def measure(
    hub_url: str, trivial_url: str, args: argparse.Namespace, pids: tuple[int, int]
) -> dict[str, Any]:
    hub_pid, bare_pid = pids
    print(f"warming up ({args.pairs} pairs)...", file=sys.stderr)
    await trivial_run(trivial_url, args.pairs, 1.0, None)
    await relay_run(hub_url, args.pairs, 1.0, None, run=0)
    bare_tp: list[Result] = []
    relay_tp: list[Result] = []
    bare_lat: list[Result] = []
    relay_lat: list[Result] = []
    relay_slow: list[Result] = []
    bare_slow: list[Result] = []
    for rep in range(args.reps):
        print(
            f"rep {rep + 1}/{args.reps}: throughput ({args.duration:g} s each, {args.pairs} "
            f"pairs), then latency at an offered {args.rate:g}/s...",
            file=sys.stderr,
        )
        bare_tp.append(
            await timed(bare_pid, trivial_run(trivial_url, args.pairs, args.duration, None))
        )
        relay_tp.append(
            await relay_run(hub_url, args.pairs, args.duration, None, 4 * rep + 1, pid=hub_pid)
        )
        bare_lat.append(await trivial_run(trivial_url, args.pairs, args.duration, args.rate))
        relay_lat.append(
            await relay_run(hub_url, args.pairs, args.duration, args.rate, run=4 * rep + 2)
        )
        # Agents that each send now and then: nothing to batch, every send and claim alone.
        # Beside them the bare endpoint at the same requests/s (a message is a send and a
        # receive): what waking for each request alone costs this machine.
        slow = args.slow_agents
        relay_slow.append(
            await relay_run(hub_url, slow, args.duration, 2.0 * slow, 4 * rep + 3, pid=hub_pid)
        )
        bare_slow.append(
            await timed(bare_pid, trivial_run(trivial_url, 2 * slow, args.duration, 4.0 * slow))
        )
    ratios = [r.rate / b.rate for r, b in zip(relay_tp, bare_tp, strict=True)]
    return {
        "trivial_tp": middle(bare_tp),
        "relay_tp": middle(relay_tp),
        "trivial_lat": middle(bare_lat),
        "relay_lat": middle(relay_lat),
        "ratios": ratios,
        "p99s": [r.pct(99) for r in relay_lat],
        "bare_cpu_us": median([b.cpu_us for b in bare_tp]),
        "relay_cpu_us": median([r.cpu_us for r in relay_tp]),
        "cpu_ratios": [r.cpu_us / b.cpu_us for r, b in zip(relay_tp, bare_tp, strict=True)],
        "slow_cpu_us": median([r.cpu_us for r in relay_slow]),
        "slow_ratios": [s.cpu_us / r.cpu_us for s, r in zip(relay_slow, relay_tp, strict=True)],
        "bare_slow_cpu_us": median([b.cpu_us for b in bare_slow]),
        "bare_slow_ratios": [s.cpu_us / b.cpu_us for s, b in zip(bare_slow, bare_tp, strict=True)],
        "bare_client_us": median([b.client_cpu_us for b in bare_tp]),
        "relay_client_us": median([r.client_cpu_us for r in relay_tp]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=128, help="sender/receiver pairs")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    parser.add_argument("--rate", type=float, default=500.0, help="offered messages/s")
    parser.add_argument("--reps", type=int, default=3, help="alternations of bare and relay")
    parser.add_argument(
        "--slow-agents", type=int, default=100, help="agents sending 2 msgs/s each (low rate)"
    )
    parser.add_argument("--quick", action="store_true", help="1-second phases, one rep")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    parser.add_argument("--serve-trivial", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_trivial:
        serve_trivial()
        return
    if args.quick:
        args.duration, args.reps = 1.0, 1

    tmp = Path(tempfile.mkdtemp(prefix="caucus-bench-"))
    hub, hub_url = start(hub_command(tmp / "bench.db"), {**BENCH_ENV, "CAUCUS_HOME": str(tmp)})
    trivial, trivial_url = start([sys.executable, __file__, "--serve-trivial"])
    try:
        r = asyncio.run(measure(hub_url, trivial_url, args, (hub.pid, trivial.pid)))
    finally:
        stop(hub)
        stop(trivial)
        shutil.rmtree(tmp, ignore_errors=True)  # the hub's folder: its database, its token

    ratio_tp = median(r["ratios"])
    ratio_cpu, ratio_slow = median(r["cpu_ratios"]), median(r["slow_ratios"])
    p99 = median(r["p99s"])
    figures = {
        "pairs": args.pairs,
        "duration_s": args.duration,
        "cpus": os.cpu_count(),
        "reps": args.reps,
        "bare_rps": round(r["trivial_tp"].rate),
        "relay_msgs_per_s": round(r["relay_tp"].rate),
        "bare_cpu_us_per_request": round(r["bare_cpu_us"], 1),
        "relay_cpu_us_per_message": round(r["relay_cpu_us"], 1),
        "load_cpu_us_per_request": round(r["bare_client_us"], 1),
        "load_cpu_us_per_message": round(r["relay_client_us"], 1),
        "cpu_ratio": round(ratio_cpu, 2),
        "cpu_ratios": [round(x, 2) for x in r["cpu_ratios"]],
        "slow_agents": args.slow_agents,
        "slow_cpu_us_per_message": round(r["slow_cpu_us"], 1),
        "slow_ratio": round(ratio_slow, 2),
        "slow_ratios": [round(x, 2) for x in r["slow_ratios"]],
        "bare_slow_cpu_us_per_request": round(r["bare_slow_cpu_us"], 1),
        "bare_slow_ratio": round(median(r["bare_slow_ratios"]), 2),
        "throughput_ratio": round(ratio_tp, 3),
        "throughput_ratios": [round(x, 3) for x in r["ratios"]],
        "offered_rate": args.rate,
        "bare_p50_ms": round(r["trivial_lat"].pct(50), 2),
        "bare_p99_ms": round(r["trivial_lat"].pct(99), 2),
        "relay_p50_ms": round(r["relay_lat"].pct(50), 2),
        "relay_p99_ms": round(p99, 2),
        "p99_ratio": round(p99 / r["trivial_lat"].pct(99), 2),
        "achieved_rate_relay": round(r["relay_lat"].rate),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"\nCaucus relay benchmark  ({args.pairs} pairs, {args.duration:g} s phases, "
        f"{args.reps} reps (medians), {os.cpu_count()} CPUs, SQLite synchronous=FULL)\n"
    )
    each = ", ".join(f"{x:.2f}" for x in r["ratios"])
    print("throughput (closed loop)")
    print(f"  bare Starlette POST     {fmt(r['trivial_tp'])}")
    print(f"  durable relay           {fmt(r['relay_tp'])}   (send -> receive)")
    print(f"  ratio relay/bare        {ratio_tp:9.2f}      (each rep: {each})")
    print(
        f"  server CPU              bare {r['bare_cpu_us']:6.0f} us/request   relay "
        f"{r['relay_cpu_us']:6.0f} us/message (all its threads)"
    )
    cpus = ", ".join(f"{x:.2f}" for x in r["cpu_ratios"])
    print(f"  CPU relay/bare          {ratio_cpu:9.2f}x     target <= {TARGET_CPU_RATIO}  ({cpus})")
    # The load generator shares the machine: what it spends per operation is CPU the server
    # does not get, so it shapes both rates (a relayed message is two of its requests).
    print(
        f"  load generator CPU      bare {r['bare_client_us']:6.0f} us/request   relay "
        f"{r['relay_client_us']:6.0f} us/message (this process)"
    )
    print(f"\nlatency at an offered {args.rate:g}/s (open loop)")
    print(f"  bare Starlette POST     {fmt(r['trivial_lat'])}")
    print(f"  durable relay           {fmt(r['relay_lat'])}   (send -> receive)")
    print(f"  relay p99               {p99:9.2f} ms   target <= {TARGET_P99_MS} ms")
    slows = ", ".join(f"{x:.2f}" for x in r["slow_ratios"])
    print(f"\n{args.slow_agents} agents sending 2 msgs/s each (nothing to batch)")
    print(
        f"  server CPU              {r['slow_cpu_us']:6.0f} us/message   bare at the same "
        f"requests/s {r['bare_slow_cpu_us']:6.0f} us/request "
        f"({median(r['bare_slow_ratios']):.2f}x its closed loop's)"
    )
    print(
        f"  CPU low rate/closed     {ratio_slow:9.2f}x     target <= {TARGET_SLOW_RATIO}  ({slows})"
    )
    ok = ratio_cpu <= TARGET_CPU_RATIO and ratio_slow <= TARGET_SLOW_RATIO
    ok = ok and p99 <= TARGET_P99_MS
    print(f"\n{'within' if ok else 'OUTSIDE'} targets")


if __name__ == "__main__":
    main()
