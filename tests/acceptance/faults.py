"""`caucus` with a kill -9 injected at a named point, for crash tests that need the kill to land
in a window a signal from outside cannot aim at.

    python -m tests.acceptance.faults <point> <caucus arguments...>

Points:
- `ledger-checkpoint`: the process SIGKILLs itself when a ledger append has fsynced its lines
  and is about to move the head checkpoint, on the Nth such move (`CAUCUS_FAULT_AFTER`, default
  1): the window a crash leaves records past the checkpoint.

Only the test suite runs this; the hub itself has no fault hooks.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any


def _kill_at_checkpoint() -> None:
    from caucus.ledger import chain

    real = chain.replace_atomically  # type: ignore[attr-defined]
    moves = [int(os.environ.get("CAUCUS_FAULT_AFTER", "1"))]

    def replace(path: Path, data: bytes, **kwargs: Any) -> None:
        if path.name.endswith(".head"):  # chain.head_path(ledger)
            moves[0] -= 1
            if moves[0] <= 0:
                os.kill(os.getpid(), signal.SIGKILL)
        real(path, data, **kwargs)

    chain.replace_atomically = replace  # type: ignore[attr-defined]


POINTS = {"ledger-checkpoint": _kill_at_checkpoint}


def main() -> None:
    point, *rest = sys.argv[1:]
    POINTS[point]()
    sys.argv = ["caucus", *rest]
    from caucus.cli.main import main as caucus

    caucus()


if __name__ == "__main__":
    main()
