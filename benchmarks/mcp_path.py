"""MCP beside plain HTTP on the same hub, in one run: delivery latency and a call's overhead.

Starts `caucus hub` (a fresh SQLite file) and measures, one message at a time (so each figure
is a latency, not a queue):

1. delivery: a receiver parked in a long-poll, a sender sends, the time until the receiver
   has the message. Over HTTP: `POST /send` and `GET /receive` (a lean keep-alive client).
   Over MCP: two official MCP SDK clients on `/mcp` (a handshake-era session each), `say`
   and a pending `listen`.
2. a call's round trip: the same service call (a send) through each door, from request to
   answer: HTTP `POST /send` against MCP `tools/call say`. The difference is what the MCP
   layer (its framing, validation, result rendering and the SDK client's own work) adds.

Beside each door's latencies it prints the hub's own CPU per message (user + system, /proc,
all its threads) while that door ran: what of the MCP overhead is the hub's, and what is the
client's.

Issue 33's targets: MCP delivery p50 ≤ 1.3x HTTP's; `tools/call` overhead ≤ 1 ms p50. The
figures are end to end, clients included: the SDK client's own CPU counts against MCP, as a
host's would. Run: `.venv/bin/python benchmarks/mcp_path.py` (`--count N`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import relay

TARGET_DELIVERY_RATIO = 1.3
TARGET_CALL_OVERHEAD_MS = 1.0


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def http_paths(url: str, count: int, tag: str) -> tuple[list[float], list[float]]:
    """(delivery ms, send round trip ms) over plain HTTP."""
    host, port = relay.host_port(url)
    sender = await relay.Conn(host, port, await relay.register(url, f"http-s{tag}")).open()
    receiver = await relay.Conn(host, port, await relay.register(url, f"http-r{tag}")).open()
    delivery: list[float] = []
    calls: list[float] = []
    ack = None
    for n in range(count):
        path = "/receive?timeout=10" + (f"&ack={ack}" if ack is not None else "")
        parked = asyncio.ensure_future(receiver.request("GET", path))
        await asyncio.sleep(0.002)  # the receive parks before the send, as in the MCP run
        body = json.dumps({"to": f"http-r{tag}", "content": f"m{n}"}).encode()
        started = time.perf_counter()
        status, _ = await sender.request("POST", "/send", body)
        calls.append((time.perf_counter() - started) * 1000)
        assert status == 200
        status, data = await parked
        delivery.append((time.perf_counter() - started) * 1000)
        messages = json.loads(data)["messages"]
        assert [m["content"] for m in messages] == [f"m{n}"], messages
        ack = messages[-1]["seq"]
    sender.close()
    receiver.close()
    return delivery, calls


async def mcp_paths(url: str, count: int, tag: str) -> tuple[list[float], list[float]]:
    """(delivery ms, say round trip ms) over `/mcp` with the official SDK client."""
    from mcp import Client

    async def call(client: Any, tool: str, **args: object) -> dict[str, Any]:
        result = await client.call_tool(tool, dict(args))
        assert not result.is_error, result
        content: dict[str, Any] = result.structured_content
        return content

    delivery: list[float] = []
    calls: list[float] = []
    async with (
        Client(f"{url}/mcp", mode="legacy") as sender,
        Client(f"{url}/mcp", mode="legacy") as receiver,
    ):
        await call(sender, "join", name=f"mcp-s{tag}")
        await call(receiver, "join", name=f"mcp-r{tag}")
        for n in range(count):
            parked = asyncio.ensure_future(call(receiver, "listen", timeout=10))
            await asyncio.sleep(0.002)
            started = time.perf_counter()
            await call(sender, "say", to=f"mcp-r{tag}", content=f"m{n}")
            calls.append((time.perf_counter() - started) * 1000)
            got = await parked
            delivery.append((time.perf_counter() - started) * 1000)
            assert [m["content"] for m in got["messages"]] == [f"m{n}"], got
    return delivery, calls


async def measure(url: str, count: int, pid: int) -> tuple[dict[str, list[float]], list[float]]:
    """The latencies through each door, and the hub's CPU per message (µs) while each ran."""
    await http_paths(url, 20, "0")  # warm both doors
    await mcp_paths(url, 5, "0")
    before = relay.process_cpu(pid)
    http_delivery, http_calls = await http_paths(url, count, "1")
    middle = relay.process_cpu(pid)
    mcp_delivery, mcp_calls = await mcp_paths(url, count, "1")
    after = relay.process_cpu(pid)
    found = {
        "http_delivery": http_delivery,
        "http_call": http_calls,
        "mcp_delivery": mcp_delivery,
        "mcp_call": mcp_calls,
    }
    return found, [(middle - before) / count * 1e6, (after - middle) / count * 1e6]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300, help="messages through each door")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="caucus-bench-"))
    env = {**relay.BENCH_ENV, "CAUCUS_HOME": str(tmp)}
    hub, url = relay.start(relay.hub_command(tmp / "bench.db"), env)
    try:
        found, cpu = asyncio.run(measure(url, args.count, hub.pid))
    finally:
        relay.stop(hub)
    figures = {f"{k}_{p}_ms": round(pct(v, p), 2) for k, v in found.items() for p in (50, 99)}
    ratio = statistics.median(found["mcp_delivery"]) / statistics.median(found["http_delivery"])
    overhead = statistics.median(found["mcp_call"]) - statistics.median(found["http_call"])
    figures |= {"delivery_ratio": round(ratio, 2), "call_overhead_ms": round(overhead, 2)}
    figures |= {"http_hub_cpu_us": round(cpu[0]), "mcp_hub_cpu_us": round(cpu[1])}
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"\nMCP beside HTTP on one hub ({args.count} messages each, one at a time)\n")
    for door in ("http", "mcp"):
        print(
            f"  {door:4}  delivery p50 {figures[f'{door}_delivery_50_ms']:6.2f} ms  "
            f"p99 {figures[f'{door}_delivery_99_ms']:6.2f} ms   "
            f"call p50 {figures[f'{door}_call_50_ms']:6.2f} ms  "
            f"p99 {figures[f'{door}_call_99_ms']:6.2f} ms"
        )
    print(
        f"\n  hub CPU per message     HTTP {cpu[0]:5.0f} us   MCP {cpu[1]:5.0f} us "
        f"(a send or say, its listen or receive; all the hub's threads)"
    )
    print(f"  MCP/HTTP delivery p50   {ratio:6.2f}x   target <= {TARGET_DELIVERY_RATIO}x")
    print(
        f"  tools/call overhead p50 {overhead:6.2f} ms  target <= {TARGET_CALL_OVERHEAD_MS} ms"
        " (say over POST /send)"
    )
    ok = ratio <= TARGET_DELIVERY_RATIO and overhead <= TARGET_CALL_OVERHEAD_MS
    print(f"\n{'within' if ok else 'OUTSIDE'} targets")


if __name__ == "__main__":
    main()
