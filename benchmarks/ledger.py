"""Verifying a 100,000-record decision ledger, beside the floor cost of reading it, in one run.

The baseline reads the same file, parses every line as JSON and hashes it: the least any
verifier must do. The ratio shows what the spec's checks (duplicate keys, types, timestamps,
surrogates, numeric limits, canonical re-serialization) cost on top, and what the second
process (used from 8 MiB up) wins back. The issue's target is under 2 s for 100,000 records
on a 2-core machine; the records here are deliberation-sized (about 660 bytes). It also times
one more decision appended by the hub's writer, which re-verifies only when the file changed
behind it, beside `append` (a full verification first, as any fresh writer must).
Run: `.venv/bin/python benchmarks/ledger.py`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from pathlib import Path

from caucus.ledger.chain import Ledger, append, append_many
from caucus.ledger.verify import verify_chain


def record(n: int) -> dict[str, object]:
    return {
        "schema_version": "0.1",
        "timestamp": "2026-11-30T00:00:00+00:00",
        "subject": f"Ship release {n}? — a decision with a realistic subject line",
        "positions": [
            {"agent": "analyst-1", "stance": "yes", "summary": "tests pass", "confidence": 0.9},
            {"agent": "analyst-2", "stance": "yes", "summary": "docs ready", "confidence": 0.7},
        ],
        "decision": "ship",
        "dissent": [{"agent": "skeptic", "stance": "no", "summary": "wait", "confidence": 0.4}],
        "confidence": 0.8,
        "evidence": [{"source": "ci", "ref": f"run-{n}"}, {"source": "form", "ref": f"f{n}"}],
    }


def baseline(path: Path) -> int:
    count = 0
    for raw in path.read_bytes().split(b"\n"):
        if raw:
            json.loads(raw)
            hashlib.sha256(raw).hexdigest()
            count += 1
    return count


def best_of(runs: int, fn: object) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "decisions.jsonl"
        print(f"writing {args.records:,} records ...", flush=True)
        started = time.perf_counter()
        append_many(path, (record(n) for n in range(args.records)))
        print(f"  written in {time.perf_counter() - started:.2f} s ({path.stat().st_size:,} bytes)")
        report, _ = verify_chain(path)
        if not report.intact or report.count != args.records:
            raise SystemExit(f"the benchmark ledger does not verify: {report}")
        floor = best_of(args.runs, lambda: baseline(path))
        full = best_of(args.runs, lambda: verify_chain(path))
        serial = best_of(1, lambda: verify_chain(path, parallel_from=0))
        fresh = best_of(1, lambda: append(path, record(-1)))
        writer = Ledger(path)
        writer.append_many([record(-2)])  # its first append verifies the whole chain
        cached = best_of(args.runs, lambda: writer.append_many([record(-3)]))
        if not verify_chain(path)[0].intact:
            raise SystemExit("the appends broke the benchmark ledger")
    print(f"baseline (parse + sha256 every line): {floor:.3f} s")
    print(f"caucus verify (all spec checks):      {full:.3f} s")
    print(f"caucus verify, one process only:      {serial:.3f} s")
    print(f"records verified per second:          {args.records / full:,.0f}")
    print(f"ratio verify / baseline:              {full / floor:.2f}")
    print(f"one append, fresh writer (verifies):  {fresh * 1000:.1f} ms")
    print(f"one append, the hub's writer:         {cached * 1000:.1f} ms")
    print(f"ratio fresh / hub's writer:           {fresh / cached:.0f}")
    print(f"target: under 2 s for 100,000 records -> {'met' if full < 2.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
