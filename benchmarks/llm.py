"""A native agent's turn on a real local model, beside the same turn on the scripted fake.

One `caucus agent --hub` process at a time answers questions an HTTP peer sends it through a
real hub: first on the FakeOpenAI server (the baseline: what the hub and the runtime cost a
turn), then on Qwen2.5-Coder-0.5B behind llama-cpp-python's server (the `llm` test tier's model
and server, built once into ~/.cache/caucus/llm). Each turn is timed from the send to the
reply's arrival. The model server's own counters (its log) give prompt and generation
tokens per second.

It prints turn latency (first turn, then p50 of the rest, which reuse the server's prompt
cache), the ratio to the baseline, and tokens/s. Run: `.venv/bin/python benchmarks/llm.py`
(`--turns N`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).parent.parent))  # the llm tier's model and server

from tests.llm.model import model_path, server_python

from caucus.client import HubClient
from caucus.testing import FakeOpenAI, Say, make_hub, serve, serve_fake

PROMPT = "You are calc-bot. Answer each question in one short sentence of plain text.\n"
QUESTIONS = ["What is 2 + 3?", "What is 7 times 6?", "Name a prime above 10.", "What is 9 - 4?"]
PERF = re.compile(r"(prompt eval|\s eval) time =\s+([\d.]+) ms /\s+(\d+) (?:tokens|runs)")


def start_server(log: Path, python: Path, gguf: Path, port: int) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [
                *(str(python), "-m", "llama_cpp.server", "--model", str(gguf)),
                *("--model_alias", "qwen", "--host", "127.0.0.1", "--port", str(port)),
                *("--n_ctx", "8192", "--interrupt_requests", "False"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


@asynccontextmanager
async def llama_server(log: Path) -> AsyncIterator[str]:
    python, gguf = server_python(), model_path()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = start_server(log, python, gguf, port)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        async with httpx2.AsyncClient() as http:
            for _ in range(480):
                if proc.poll() is not None:
                    raise SystemExit(f"the model server exited:\n{tail(log)}")
                try:
                    if (await http.get(f"{base}/models", timeout=2)).status_code == 200:
                        break
                except httpx2.TransportError:
                    pass
                await asyncio.sleep(0.25)
            else:
                raise SystemExit("the model server did not answer in 120 s")
        yield base
    finally:
        proc.terminate()
        proc.wait(10)


async def turns(base_url: str, model: str, count: int, tmp: Path) -> list[float]:
    """Seconds from each question's send to the agent's answer arriving."""
    (tmp / "calc.md").write_text(PROMPT, "utf-8")
    async with make_hub(tmp / f"hub-{model}") as hub, serve(hub) as url, HubClient(url) as asker:
        await asker.register("asker")
        agent = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "caucus", "agent", "--model", model, "--base-url", base_url),
            *("--hub", url, "--name", "calc-bot", "--prompt", str(tmp / "calc.md")),
            *("--temperature", "0", "--no-stdin"),
            cwd=str(tmp),
            env={**os.environ, "XDG_STATE_HOME": str(tmp / f"state-{model}")},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for _ in range(600):  # its join, 30 s at most
            if "calc-bot" in {p.name for p in await asker.peers()}:
                break
            await asyncio.sleep(0.05)
        spent: list[float] = []
        for n in range(count):
            started = time.perf_counter()
            await asker.send("calc-bot", QUESTIONS[n % len(QUESTIONS)])
            async with asyncio.timeout(600):
                while not (await asker.receive(timeout=30)).messages:
                    pass
            spent.append(time.perf_counter() - started)
            print(f"  {model}: turn {n + 1}/{count} {spent[-1]:.2f} s", file=sys.stderr)
        await hub.control.stop()
        await asyncio.wait_for(agent.wait(), 600)
    return spent


def rates(log: Path) -> tuple[float, float]:
    """(prompt tokens/s, generated tokens/s) over every request the server logged."""
    totals = {"prompt eval": [0.0, 0], "eval": [0.0, 0]}
    for kind, ms, n in PERF.findall(log.read_text(errors="replace")):
        slot = totals[kind.strip()]
        slot[0] += float(ms)
        slot[1] += int(n)
    prompt, gen = totals["prompt eval"], totals["eval"]
    return prompt[1] / (prompt[0] / 1000), gen[1] / (gen[0] / 1000)


def summary(spent: list[float]) -> str:
    rest = statistics.median(spent[1:]) if len(spent) > 1 else spent[0]
    return f"first {spent[0]:.2f} s, then p50 {rest:.2f} s"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        fake = FakeOpenAI(lambda _: [Say("5")])
        async with serve_fake(fake) as fake_url:
            baseline = await turns(f"{fake_url}/v1", "fake-model", args.turns, tmp)
        log = tmp / "server.log"
        async with llama_server(log) as llm_url:
            real = await turns(llm_url, "qwen", args.turns, tmp)
        prompt_rate, gen_rate = rates(log)
    base = statistics.median(baseline)
    print(f"turn, fake model (baseline): {summary(baseline)}")
    print(f"turn, Qwen2.5-Coder-0.5B:    {summary(real)}")
    print(f"ratio to baseline (p50):     {statistics.median(real) / base:.0f}x")
    print(f"prompt: {prompt_rate:.0f} tokens/s, generation: {gen_rate:.1f} tokens/s")


if __name__ == "__main__":
    asyncio.run(main())
