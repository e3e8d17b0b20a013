"""Token buckets, one per identity and budget: pure arithmetic over the time a clock gives,
shared by the room's budgets (services) and the HTTP shield (web)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Protocol

from caucus.errors import RateLimited


class Clock(Protocol):
    def monotonic(self) -> float: ...


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float


class TokenBuckets:
    """`capacity` tokens, refilled at `refill` per second; one bucket per key. At most
    `max_keys` buckets are kept: past it, the full ones (which a new bucket equals) go."""

    def __init__(
        self,
        clock: Clock,
        *,
        capacity: float,
        refill: float,
        what: str,
        max_keys: int = 100_000,
    ) -> None:
        self._clock = clock
        self.capacity = capacity
        self.refill = refill
        self._what = what
        self._max_keys = max_keys
        self._buckets: dict[Hashable, _Bucket] = {}

    def configure(self, *, capacity: float, refill: float) -> None:
        self.capacity = capacity
        self.refill = refill

    def take(self, key: Hashable, cost: float = 1.0) -> None:
        """Spend `cost` tokens or raise RateLimited saying when to retry."""
        now = self._clock.monotonic()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._max_keys:
                self._drop_full(now)
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

    def _refilled(self, key: Hashable) -> _Bucket | None:
        bucket = self._buckets.get(key)
        if bucket is not None:
            now = self._clock.monotonic()
            bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.stamp) * self.refill)
            bucket.stamp = now
        return bucket

    def wait(self, key: Hashable, cost: float = 1.0) -> float:
        """Seconds until `cost` tokens are there (0 when they are), spending nothing."""
        bucket = self._refilled(key)
        if bucket is None or bucket.tokens >= cost:
            return 0.0
        return (cost - bucket.tokens) / self.refill

    def spend(self, key: Hashable, cost: float = 1.0) -> None:
        """Spend `cost` tokens, going below zero if need be (a debt refilled first)."""
        bucket = self._refilled(key)
        if bucket is None:
            if len(self._buckets) >= self._max_keys:
                self._drop_full(self._clock.monotonic())
            bucket = self._buckets[key] = _Bucket(self.capacity, self._clock.monotonic())
        bucket.tokens = max(bucket.tokens - cost, -self.capacity)

    def forget(self, key: Hashable) -> None:
        self._buckets.pop(key, None)

    def _drop_full(self, now: float) -> None:
        self._buckets = {
            key: b
            for key, b in self._buckets.items()
            if b.tokens + (now - b.stamp) * self.refill < self.capacity
        }
