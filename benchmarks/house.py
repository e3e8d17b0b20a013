"""The house before and after a change, and what each lane past the frameworks buys, in one run.

Runs the relay (`relay.py`: hub CPU per relayed message, normalised by a bare endpoint's CPU
per request measured beside it), the MCP path (`mcp_path.py`: MCP/HTTP delivery latency
ratio) and parked agents (`parked.py`: memory per parked agent) against:

- `before`: the hub at `--before` (a git revision, checked out in a temporary worktree);
- `after`: the hub of this checkout;
- `no lean lane`: this checkout with `lean_lane = false` (uvicorn's ASGI cycle for every
  request; ADR 0026's lane is what the difference buys);
- `no MCP call lane`: this checkout with `mcp_call_lane = false` (the SDK answers every tool
  call; ADR 0027's lane), for the MCP path only.

Configurations alternate within each repetition, so a shared machine's drift moves them
alike; figures are medians over `--reps`, printed with each configuration's ratio to `after`.
Each benchmark script is this checkout's; only the hub it starts (`python -m caucus`) is the
configuration's. Run: `.venv/bin/python benchmarks/house.py --before <rev>` (`--quick`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent

# benchmark -> (its figure, what it measures, whether lower is better)
FIGURES = {
    "relay": ("cpu_ratio", "hub CPU per relayed message / bare CPU per request", True),
    "mcp_path": ("delivery_ratio", "MCP/HTTP delivery latency p50", True),
    "parked": ("kb_per_agent", "KB per parked agent", True),
}


def run(script: str, args: list[str], src: Path, env: dict[str, str]) -> dict[str, float]:
    """One benchmark's figures, with the hub of `src` (and its settings in `env`)."""
    environ = {**os.environ, "PYTHONPATH": str(src), **env}
    done = subprocess.run(
        [sys.executable, str(HERE / f"{script}.py"), *args, "--json"],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
        cwd=tempfile.gettempdir(),  # never import the checkout's package by accident
    )
    if done.returncode != 0:
        raise SystemExit(f"{script} failed:\n{done.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(done.stdout[done.stdout.index("{") :])
    if script == "relay":
        figures["cpu_ratio"] = (
            figures["relay_cpu_us_per_message"] / figures["bare_cpu_us_per_request"]
        )
    return figures


def worktree(rev: str) -> Path:
    where = Path(tempfile.mkdtemp(prefix="caucus-before-")) / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev],
        check=True,
        capture_output=True,
    )
    return where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the git revision to compare with")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="short phases, fewer agents")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()
    before = worktree(args.before)
    after = ROOT / "src"
    configs = {
        "before": (before / "src", {}),
        "after": (after, {}),
        "no lean lane": (after, {"CAUCUS_LEAN_LANE": "false"}),
        "no MCP call lane": (after, {"CAUCUS_MCP_CALL_LANE": "false"}),
    }
    scripts = {
        "relay": ["--quick"] if args.quick else ["--reps", "1"],
        "mcp_path": ["--count", "100" if args.quick else "300"],
        "parked": ["--agents", "1000" if args.quick else "10000"],
    }
    found: dict[str, dict[str, list[float]]] = {s: {c: [] for c in configs} for s in scripts}
    try:
        for rep in range(args.reps):
            for script, script_args in scripts.items():
                figure = FIGURES[script][0]
                for name, (src, env) in configs.items():
                    if name == "no MCP call lane" and script != "mcp_path":
                        continue
                    value = run(script, script_args, src, env)[figure]
                    found[script][name].append(value)
                    print(f"rep {rep + 1}: {script} {name}: {figure} {value:.3f}", file=sys.stderr)
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)],
            check=False,
            capture_output=True,
        )
    report(found, args)


def report(found: dict[str, dict[str, list[float]]], args: argparse.Namespace) -> None:
    medians = {s: {c: statistics.median(v) for c, v in by.items() if v} for s, by in found.items()}
    if args.json:
        print(json.dumps({"before": args.before, "reps": args.reps, "medians": medians}))
        return
    print(f"\nThe house before ({args.before}) and after, and each lane's gain ({args.reps} reps)")
    for script, by in medians.items():
        figure, what, _ = FIGURES[script]
        print(f"\n{script}: {what} ({figure})")
        base = by["after"]
        for name, value in by.items():
            print(f"  {name:18} {value:8.3f}   {value / base:5.2f}x after")
        for lane in ("no lean lane", "no MCP call lane"):
            if lane in by:
                gain = 1 - base / by[lane]
                print(f"  the {lane[3:]} buys {gain:6.1%} on this measure")


if __name__ == "__main__":
    main()
