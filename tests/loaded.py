"""Run tests again and again on a loaded machine: `python -m tests.loaded RUNS -- PYTEST_ARGS`.

A busy loop per core keeps the machine as loaded as a shared CI runner (bounded: the burners
end with the run, and on their own after `--limit` seconds whatever happens), then pytest runs
`RUNS` times in a row, stopping at the first red run. It prints each run's outcome and time and
exits non-zero unless every run passed: how a test that passes alone but fails under load is
shown fixed (issue 29).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

BURN = "import time\nend = time.monotonic() + {limit}\nwhile time.monotonic() < end:\n    pass\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.loaded")
    parser.add_argument("runs", type=int)
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--limit", type=float, default=3600, help="seconds the load lasts at most")
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    pytest_args = argv[cut + 1 :]
    burners = [
        subprocess.Popen([sys.executable, "-c", BURN.format(limit=args.limit)])
        for _ in range(args.burners)
    ]
    print(f"{args.burners} busy loops running (for {args.limit:.0f} s at most)", flush=True)
    try:
        for n in range(1, args.runs + 1):
            started = time.monotonic()
            run = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
                capture_output=True,
                text=True,
                check=False,
            )
            took = time.monotonic() - started
            last = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "(no output)"
            print(f"run {n}/{args.runs}: {last} ({took:.1f} s)", flush=True)
            if run.returncode != 0:
                print(run.stdout[-5000:], run.stderr[-2000:], sep="\n")
                return 1
        print(f"all {args.runs} runs passed under load")
        return 0
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
