"""Durable relay vs a trivial endpoint, over real HTTP, measured in the same run.

Starts `caucus hub` (a fresh SQLite file, synchronous=FULL) and a trivial Starlette POST endpoint
(parse the JSON body, answer JSON) served by the same uvicorn setup, each in its own process,
and drives both from this process with a lean keep-alive HTTP/1.1 client:

1. throughput: N sender/receiver pairs as fast as they go (relay: messages/s delivered to
   receivers; trivial: requests/s answered);
2. latency at an offered rate (default 500/s, open loop, measured from the scheduled send time so
   a stall is not hidden): relay send->receive p50/p99, trivial request->response p50/p99.

It prints the figures and the ratios relay/trivial. Run: `./dev bench` (or `--quick`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TARGET_THROUGHPUT_RATIO = 0.30
TARGET_P99_MS = 25.0


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

    def pct(self, p: float) -> float:
        if not self.latencies_ms:
            return float("nan")
        data = sorted(self.latencies_ms)
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
    return Result(done / elapsed, lat)


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
) -> Result:
    """N sender/receiver pairs, closed loop (or open at `rate`). With `spread` (hubs sharing a
    database), pair i sends on hub i and receives on hub i+1."""
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
    received = 0
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

    async def receiver(c: Conn) -> None:
        nonlocal received
        ack = None
        while not stop_receiving.is_set():
            path = "/receive?timeout=1" + (f"&ack={ack}" if ack is not None else "")
            status, data = await c.request("GET", path)
            assert status == 200, data
            now = time.perf_counter()
            messages = json.loads(data)["messages"]
            for m in messages:
                sent = float(m["content"].split("|", 1)[0])
                if sent >= start:
                    lat.append((now - sent) * 1000)
            if now <= end:
                received += len(messages)
            if messages:
                ack = messages[-1]["seq"]

    receiving = [asyncio.create_task(receiver(c)) for c in receivers]
    await asyncio.gather(
        *(sender(i, c, r) for i, (c, (_, r)) in enumerate(zip(senders, names, strict=True)))
    )
    await asyncio.sleep(0.5)  # let the last messages land
    stop_receiving.set()
    await asyncio.gather(*receiving)
    elapsed = min(time.perf_counter(), end) - start
    for c in senders + receivers:
        c.close()
    return Result(received / elapsed, lat)


def fmt(r: Result) -> str:
    return f"{r.rate:9.0f}/s   p50 {r.pct(50):7.2f} ms   p99 {r.pct(99):7.2f} ms"


async def measure(hub_url: str, trivial_url: str, args: argparse.Namespace) -> dict[str, Any]:
    print(f"warming up ({args.pairs} pairs)...", file=sys.stderr)
    await trivial_run(trivial_url, args.pairs, 1.0, None)
    await relay_run(hub_url, args.pairs, 1.0, None, run=0)

    print(f"throughput: {args.duration:g} s each, {args.pairs} pairs...", file=sys.stderr)
    t_tp = await trivial_run(trivial_url, args.pairs, args.duration, None)
    r_tp = await relay_run(hub_url, args.pairs, args.duration, None, run=1)
    print(f"latency at an offered {args.rate:g}/s...", file=sys.stderr)
    t_lat = await trivial_run(trivial_url, args.pairs, args.duration, args.rate)
    r_lat = await relay_run(hub_url, args.pairs, args.duration, args.rate, run=2)
    return {"trivial_tp": t_tp, "relay_tp": r_tp, "trivial_lat": t_lat, "relay_lat": r_lat}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=128, help="sender/receiver pairs")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    parser.add_argument("--rate", type=float, default=500.0, help="offered messages/s")
    parser.add_argument("--quick", action="store_true", help="1-second phases")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    parser.add_argument("--serve-trivial", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_trivial:
        serve_trivial()
        return
    if args.quick:
        args.duration = 1.0

    tmp = Path(tempfile.mkdtemp(prefix="caucus-bench-"))
    env = {
        "CAUCUS_SEND_RATE_CAPACITY": "1000000",
        "CAUCUS_SEND_RATE_REFILL": "1000000",
        # A benchmark registers its agents from one address at once: the flood budgets
        # (issue 12) are for strangers, not for the load it measures.
        "CAUCUS_REGISTER_RATE_CAPACITY": "1000000",
        "CAUCUS_RESUME_RATE_CAPACITY": "1000000",
        "CAUCUS_STRANGER_RATE": "1000000",
        "CAUCUS_STRANGER_BURST": "1000000",
        "CAUCUS_LOG_LEVEL": "warning",
        "CAUCUS_HOME": str(tmp),
    }
    hub, hub_url = start(
        [
            sys.executable,
            "-m",
            "caucus",
            "hub",
            "--port",
            "0",
            "--json",
            "--db",
            str(tmp / "bench.db"),
        ],
        env,
    )
    trivial, trivial_url = start([sys.executable, __file__, "--serve-trivial"])
    try:
        r = asyncio.run(measure(hub_url, trivial_url, args))
    finally:
        stop(hub)
        stop(trivial)

    ratio_tp = r["relay_tp"].rate / r["trivial_tp"].rate
    p99 = r["relay_lat"].pct(99)
    figures = {
        "pairs": args.pairs,
        "duration_s": args.duration,
        "cpus": os.cpu_count(),
        "trivial_rps": round(r["trivial_tp"].rate),
        "relay_msgs_per_s": round(r["relay_tp"].rate),
        "throughput_ratio": round(ratio_tp, 3),
        "offered_rate": args.rate,
        "trivial_p50_ms": round(r["trivial_lat"].pct(50), 2),
        "trivial_p99_ms": round(r["trivial_lat"].pct(99), 2),
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
        f"{os.cpu_count()} CPUs, SQLite synchronous=FULL)\n"
    )
    print("throughput (closed loop)")
    print(f"  trivial Starlette POST  {fmt(r['trivial_tp'])}")
    print(f"  durable relay           {fmt(r['relay_tp'])}   (send -> receive)")
    print(f"  ratio relay/trivial     {ratio_tp:9.2f}      target >= {TARGET_THROUGHPUT_RATIO}")
    print(f"\nlatency at an offered {args.rate:g}/s (open loop)")
    print(f"  trivial Starlette POST  {fmt(r['trivial_lat'])}")
    print(f"  durable relay           {fmt(r['relay_lat'])}   (send -> receive)")
    print(f"  relay p99               {p99:9.2f} ms   target <= {TARGET_P99_MS} ms")
    ok = ratio_tp >= TARGET_THROUGHPUT_RATIO and p99 <= TARGET_P99_MS
    print(f"\n{'within' if ok else 'OUTSIDE'} targets")


if __name__ == "__main__":
    main()
