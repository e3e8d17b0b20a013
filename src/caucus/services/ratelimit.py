"""Token buckets, one per identity and budget."""

from __future__ import annotations

from dataclasses import dataclass

from caucus.clock import Clock
from caucus.errors import RateLimited


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float


class TokenBuckets:
    """`capacity` tokens, refilled at `refill` per second; one bucket per key."""

    def __init__(self, clock: Clock, *, capacity: float, refill: float, what: str) -> None:
        self._clock = clock
        self.capacity = capacity
        self.refill = refill
        self._what = what
        self._buckets: dict[int, _Bucket] = {}

    def configure(self, *, capacity: float, refill: float) -> None:
        self.capacity = capacity
        self.refill = refill

    def take(self, key: int, cost: float = 1.0) -> None:
        """Spend `cost` tokens or raise RateLimited saying when to retry."""
        now = self._clock.monotonic()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(self.capacity, now)
        else:
            bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.stamp) * self.refill)
            bucket.stamp = now
        if bucket.tokens >= cost:
            bucket.tokens -= cost
            return
        wait = (cost - bucket.tokens) / self.refill
        raise RateLimited(
            f"too many {self._what}: the budget is {self.capacity:g} at once, refilled at "
            f"{self.refill:g}/s; retry in {wait:.2f} s",
            retry_after=wait,
        )

    def forget(self, key: int) -> None:
        self._buckets.pop(key, None)
