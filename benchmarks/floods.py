"""Floods against `caucus hub` on loopback, each beside a legit agent's latency measured in the
same run: the legit pair's send->receive p99 under each flood, as a ratio to its quiet p99
(the issue's bar: within 3x), and what each flood achieved.

Floods (each bounded by a count, never open-ended):
- registrations: 20,000 attempts from 127.0.0.1 (the legit agents registered from 127.0.0.2);
- unjoined /mcp sessions: 10,000 initializes;
- 4 MB initializes: 250, each on a new connection, with a 4 MB clientInfo;
- bogus Bearer tokens: 10,000 /mcp calls, each with a different unknown token;
- slow clients: 1,000 connections that send half a request head and stall.
Run: `.venv/bin/python benchmarks/floods.py` (`--quick` for a tenth of each flood, `--only
"unjoined /mcp"` for one of them beside the quiet baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import relay

QUIET = ["--json", "--log-level", "warning"]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"},
    },
}


class From(relay.Conn):
    """relay's keep-alive client, from a chosen loopback address."""

    def __init__(self, host: str, port: int, token: str | None = None, local: str = "") -> None:
        super().__init__(host, port, token)
        self.local = local

    async def open(self) -> From:
        local = (self.local, 0) if self.local else None
        self.reader, self.writer = await asyncio.open_connection(
            self.host, self.port, local_addr=local
        )
        return self

    async def post(self, path: str, body: bytes, extra: str = "") -> int:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n{extra}"
        ).encode()
        self.writer.write(head + self.auth + b"\r\n" + body)
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("closed")
        status, length, chunked = int(status_line[9:12]), 0, False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            low = line.lower()
            if low.startswith(b"content-length:"):
                length = int(line[15:])
            if low.startswith(b"transfer-encoding:") and b"chunked" in low:
                chunked = True
            if low.startswith(b"connection:") and b"close" in low:
                length = length or 0
        if chunked:
            while True:
                size = int((await self.reader.readline()).strip() or b"0", 16)
                await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        else:
            await self.reader.readexactly(length)
        return status


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def legit(url: str, tokens: tuple[str, str], stop: asyncio.Event) -> relay.Result:
    """The legit pair: one send every 50 ms, its latency to the receiver."""
    host, port = relay.host_port(url)
    s = await From(host, port, tokens[0], "127.0.0.2").open()
    r = await From(host, port, tokens[1], "127.0.0.2").open()
    lat: list[float] = []
    ack: int | None = None
    try:
        while not stop.is_set():
            t0 = time.perf_counter()
            body = json.dumps({"to": "legit-b", "content": relay.PAD}).encode()
            status, _ = await s.request("POST", "/send", body)
            assert status == 200
            while True:
                path = "/receive?timeout=5" + (f"&ack={ack}" if ack else "")
                status, data = await r.request("GET", path)
                messages = json.loads(data)["messages"]
                if messages:
                    ack = messages[-1]["seq"]
                    break
            lat.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(max(0.0, 0.05 - (time.perf_counter() - t0)))
    finally:
        s.close()
        r.close()
    return relay.Result(len(lat), lat)


async def measured(
    url: str, tokens: tuple[str, str], flood: Callable[[], Awaitable[dict[str, Any]]]
) -> tuple[relay.Result, dict[str, Any]]:
    stop = asyncio.Event()
    running = asyncio.create_task(legit(url, tokens, stop))
    await asyncio.sleep(0.5)
    started = time.perf_counter()
    figures = await flood()
    figures["seconds"] = round(time.perf_counter() - started, 1)
    stop.set()
    return await running, figures


async def in_parallel(n: int, width: int, one: Callable[[int, int], Awaitable[Any]]) -> list[Any]:
    """`one(i, w)` for i in range(n), by `width` workers; `w` is the worker's own index."""
    queue = iter(range(n))
    out: list[Any] = []

    async def worker(w: int) -> None:
        for i in queue:
            out.append(await one(i, w))

    await asyncio.gather(*(worker(w) for w in range(width)))
    return out


Flood = Callable[[], Awaitable[dict[str, Any]]]


def floods_for(host: str, port: int, pid: int, scale: int) -> dict[str, Flood]:
    """Each flood against the hub at host:port (whose process is `pid`), by name."""

    async def quiet() -> dict[str, Any]:
        await asyncio.sleep(5)
        return {"rss_mb": round(rss_mb(pid), 1)}

    async def registrations() -> dict[str, Any]:
        conns = [await From(host, port, local="127.0.0.1").open() for _ in range(8)]

        async def one(i: int, w: int) -> int:
            body = json.dumps({"name": f"flood-{i}"}).encode()
            return await conns[w].post("/register", body)

        statuses = await in_parallel(20_000 // scale, 8, one)
        second = await From(host, port, local="127.0.0.3").open()
        other = await second.post("/register", json.dumps({"name": "second-source"}).encode())
        for c in [*conns, second]:
            c.close()
        return {
            "accepted": statuses.count(200),
            "throttled_429": statuses.count(429),
            "second_source": other,
        }

    async def unjoined() -> dict[str, Any]:
        before = rss_mb(pid)
        conns = [await From(host, port).open() for _ in range(8)]
        small = json.dumps(INIT).encode()

        async def one(i: int, w: int) -> int:
            return await conns[w].post("/mcp", small)

        statuses = await in_parallel(10_000 // scale, 8, one)
        for c in conns:
            c.close()
        return {
            "initialized": statuses.count(200),
            "rss_mb_before": round(before, 1),
            "rss_mb_after": round(rss_mb(pid), 1),
        }

    async def huge_initializes() -> dict[str, Any]:
        before = rss_mb(pid)
        big = dict(INIT)
        big["params"] = {**INIT["params"], "clientInfo": {"name": "x" * 4_000_000}}  # type: ignore[dict-item]
        huge = json.dumps(big).encode()
        answers: dict[str, int] = {}
        for _ in range(250 // scale):
            c = await From(host, port).open()
            try:
                answer = str(await c.post("/mcp", huge))
            except (ConnectionError, OSError):
                answer = "closed"  # refused and closed before the upload ended
            answers[answer] = answers.get(answer, 0) + 1
            c.close()
        return {
            "answers": answers,
            "rss_mb_before": round(before, 1),
            "rss_mb_after": round(rss_mb(pid), 1),
        }

    async def bogus() -> dict[str, Any]:
        conns = [await From(host, port).open() for _ in range(8)]
        call = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "whoami", "arguments": {}},
            }
        ).encode()

        async def one(i: int, w: int) -> int:
            extra = f"Authorization: Bearer cau_bogus{i:08d}{'x' * 30}\r\n"
            return await conns[w].post("/mcp", call, extra)

        statuses = await in_parallel(10_000 // scale, 8, one)
        for c in conns:
            c.close()
        return {"calls": len(statuses), "server_errors": sum(s >= 500 for s in statuses)}

    async def slow() -> dict[str, Any]:
        held = []
        for _ in range(1000 // scale):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            held.append((reader, writer))
        deadline = time.monotonic() + 20
        closed = 0
        for reader, writer in held:
            try:
                left = max(0.1, deadline - time.monotonic())
                await asyncio.wait_for(reader.read(), timeout=left)
                closed += 1
            except TimeoutError:
                pass
            writer.close()
        return {"slow_connections": len(held), "closed_by_hub": closed}

    return {
        "quiet": quiet,
        "registrations": registrations,
        "unjoined /mcp": unjoined,
        "4 MB initializes": huge_initializes,
        "bogus bearers": bogus,
        "slow clients": slow,
    }


def in_a_child(name: str, url: str, pid: int, args: argparse.Namespace) -> Flood:
    """The flood run by a process of its own: in the measuring process, its loop would delay
    the legit pair's own wake-ups and the figures would be the benchmark's, not the hub's."""

    async def run() -> dict[str, Any]:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--flood",
            name,
            "--url",
            url,
            "--hub-pid",
            str(pid),
            *(["--quick"] if args.quick else []),
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await child.communicate()
        if child.returncode != 0:
            raise SystemExit(f"the {name} flood failed ({child.returncode})")
        figures: dict[str, Any] = json.loads(out)
        return figures

    return run


async def one_flood(args: argparse.Namespace) -> None:
    host, port = relay.host_port(args.url)
    flood = floods_for(host, port, args.hub_pid, 10 if args.quick else 1)[args.flood]
    print(json.dumps(await flood()))


async def main_async(args: argparse.Namespace) -> None:
    scale = 10 if args.quick else 1
    home = Path(tempfile.mkdtemp(prefix="caucus-floods-"))
    proc, url = relay.start(
        [sys.executable, "-m", "caucus", "hub", "--port", "0", "--db", str(home / "f.db"), *QUIET],
        env={
            "CAUCUS_HOME": str(home),
            "CAUCUS_SEND_RATE_CAPACITY": "1000000",
            "CAUCUS_SEND_RATE_REFILL": "1000000",
        },
    )
    host, port = relay.host_port(url)
    try:
        tokens = []
        for name in ("legit-a", "legit-b"):
            c = await From(host, port, local="127.0.0.2").open()
            status, data = await c.request("POST", "/register", json.dumps({"name": name}).encode())
            assert status == 200, data
            tokens.append(json.loads(data)["token"])
            c.close()
        pair = (tokens[0], tokens[1])
        rows: list[tuple[str, relay.Result, dict[str, Any]]] = []

        floods = floods_for(host, port, proc.pid, scale)
        for name in [n for n in floods if not args.only or n in ("quiet", *args.only)]:
            print(f"{name}...", file=sys.stderr, flush=True)
            flood = floods[name] if name == "quiet" else in_a_child(name, url, proc.pid, args)
            result, figures = await measured(url, pair, flood)
            rows.append((name, result, figures))
    finally:
        relay.stop(proc)
    base = rows[0][1].pct(99)
    print(f"{'flood':16} {'legit p50':>10} {'legit p99':>10} {'x quiet':>8}  figures")
    for name, result, figures in rows:
        ratio = result.pct(99) / base
        print(
            f"{name:16} {result.pct(50):8.2f}ms {result.pct(99):8.2f}ms {ratio:7.2f}x  "
            + json.dumps(figures)
        )
    worst = max(r.pct(99) for _, r, _ in rows[1:]) / base
    verdict = "within" if worst <= 3 else "over"
    print(f"worst legit p99 under a flood: {worst:.2f}x quiet ({verdict} 3x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of each flood")
    parser.add_argument(
        "--only", action="append", metavar="FLOOD", help="run only this flood (repeatable)"
    )
    parser.add_argument("--flood", help=argparse.SUPPRESS)  # run one flood, print its figures
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--hub-pid", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    asyncio.run(one_flood(args) if args.flood else main_async(args))


if __name__ == "__main__":
    main()
