"""How late the hub's event loop runs: what its watch (`services/loop_watch.py`) measured."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LoopLag:
    interval: float  # seconds between wake-ups asked (0: not watched)
    samples: int
    worst: float  # seconds
    stalls: list[tuple[float, float]]  # (when it ended, on the hub's clock; seconds late)
