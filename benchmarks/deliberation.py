"""What a deliberation costs beside its model calls, and what answering in parallel saves.

A backend with a fixed latency per call (asyncio.sleep, no CPU) answers a 3-analyst panel
that splits, so a rebuttal round runs, then the chair: 7 calls. In the same run it prints:

- parallel: the engine's wall time for the whole deliberation (rounds in parallel);
- sequential: the same 7 calls made one after another (the baseline: what a loop over the
  panel would take);
- the speed-up (sequential / parallel; the ideal is 7/3 ≈ 2.33) and the engine's own time
  per deliberation beyond its calls' latency.

Run: `.venv/bin/python benchmarks/deliberation.py` (`--latency 0.05 --repeat 5`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "src"))

from caucus.deliberation.backends import CallableBackend
from caucus.deliberation.engine import ModelAnalyst, ModelChair, deliberate
from caucus.deliberation.panel import DEFAULT_PANEL, DEFAULT_STANCES


def answer(prompt: str) -> str:
    if prompt.startswith("You chair"):
        return json.dumps({"stance": "approve", "decision": "Go.", "confidence": 0.7})
    name = re.match(r"You are (\w+),", prompt)
    assert name is not None
    rebuttal = re.search(r"rebuttal round (\d)", prompt)
    stance = "reject" if name.group(1) == "skeptic" else "approve"
    summary = f"{name.group(1)} round {rebuttal.group(1) if rebuttal else 1}"
    return json.dumps({"stance": stance, "summary": summary, "confidence": 0.7})


def model(latency: float, calls: list[str]) -> CallableBackend:
    async def complete(prompt: str) -> str:
        calls.append(prompt)
        await asyncio.sleep(latency)
        return answer(prompt)

    return CallableBackend(complete)


async def parallel(latency: float) -> tuple[float, list[str]]:
    calls: list[str] = []
    backend = model(latency, calls)
    started = time.perf_counter()
    outcome = await deliberate(
        "Adopt PostgreSQL?",
        [ModelAnalyst(a, backend, lambda s: None) for a in DEFAULT_PANEL],
        ModelChair(backend, lambda s: None),
        stances=DEFAULT_STANCES,
        max_rounds=2,
    )
    elapsed = time.perf_counter() - started
    assert len(outcome.rounds) == 2, "the panel must split for a rebuttal round"
    return elapsed, calls


async def sequential(latency: float, prompts: list[str]) -> float:
    backend = model(latency, [])
    started = time.perf_counter()
    for prompt in prompts:
        await backend.complete(prompt)
    return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model call")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    walls, sums = [], []
    for _ in range(args.repeat):
        wall, prompts = await parallel(args.latency)
        walls.append(wall)
        sums.append(await sequential(args.latency, prompts))
    calls = len(prompts)
    wall, total = statistics.median(walls), statistics.median(sums)
    overhead = wall - 3 * args.latency  # three calls deep: round 1, round 2, the chair
    print(
        f"deliberation: 3 analysts, 2 rounds, chair; {calls} calls of {args.latency * 1000:.0f} ms"
    )
    print(f"  parallel (engine)    {wall * 1000:8.1f} ms  (median of {args.repeat})")
    print(f"  sequential (calls)   {total * 1000:8.1f} ms  (baseline, same calls one by one)")
    print(f"  speed-up             {total / wall:8.2f}×   (ideal {calls / 3:.2f}×)")
    print(f"  engine overhead      {overhead * 1000:8.2f} ms per deliberation")


if __name__ == "__main__":
    asyncio.run(main())
