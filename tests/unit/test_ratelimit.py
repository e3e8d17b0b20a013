import pytest

from caucus.domain.buckets import TokenBuckets
from caucus.errors import RateLimited
from caucus.testing import FakeClock


def test_a_bucket_allows_its_capacity_then_says_when_to_retry() -> None:
    clock = FakeClock()
    buckets = TokenBuckets(clock, capacity=3, refill=2, what="sends")
    for _ in range(3):
        buckets.take(1)
    with pytest.raises(RateLimited) as caught:
        buckets.take(1)
    assert caught.value.retry_after == pytest.approx(0.5)
    clock.advance(0.5)
    buckets.take(1)


def test_buckets_are_per_identity() -> None:
    buckets = TokenBuckets(FakeClock(), capacity=1, refill=1, what="sends")
    buckets.take(1)
    buckets.take(2)
    with pytest.raises(RateLimited):
        buckets.take(1)


def test_refill_never_exceeds_capacity() -> None:
    clock = FakeClock()
    buckets = TokenBuckets(clock, capacity=2, refill=10, what="sends")
    buckets.take(1)
    clock.advance(100)
    buckets.take(1)
    buckets.take(1)
    with pytest.raises(RateLimited):
        buckets.take(1)
