"""The burst settler every push path shares, on a clock the test moves: it gathers what
arrives until the hub is quiet for `gap`, stops at `cap` after the first message, and lets
nothing urgent wait."""

from __future__ import annotations

from caucus.mcp.push import settle
from caucus.testing import FakeClock
from caucus.wire.messages import InboundMessage


def message(seq: int, sender: str = "alice", kind: str = "chat") -> InboundMessage:
    return InboundMessage(
        seq=seq,
        id=f"m{seq}",
        ts=0.0,
        sender=sender,
        to="bob",
        kind=kind,
        content=f"part {seq}",
        redelivered=False,
        delivery_count=1,
    )


class Arrivals:
    """`more(wait)`: each call takes the next scripted step (seconds until it answers, what
    arrives); past the script the hub stays quiet for the whole wait."""

    def __init__(self, clock: FakeClock, *steps: tuple[float, list[InboundMessage]]) -> None:
        self.clock = clock
        self.steps = list(steps)
        self.waits: list[float] = []

    async def __call__(self, wait: float) -> list[InboundMessage]:
        self.waits.append(wait)
        if not self.steps or self.steps[0][0] > wait:
            self.clock.advance(wait)
            if self.steps:
                self.steps[0] = (self.steps[0][0] - wait, self.steps[0][1])
            return []
        after, arrived = self.steps.pop(0)
        self.clock.advance(after)
        return arrived


async def test_messages_spread_over_time_are_one_burst_until_the_hub_is_quiet() -> None:
    clock = FakeClock()
    more = Arrivals(clock, (0.3, [message(2)]), (0.3, [message(3)]))
    burst = await settle([message(1)], more, gap=3.0, cap=10.0, clock=clock.monotonic)
    assert [m.seq for m in burst] == [1, 2, 3]
    assert more.waits == [3.0, 3.0, 3.0]  # the last wait ran the whole gap: quiet


async def test_a_burst_that_keeps_coming_is_pushed_at_the_cap() -> None:
    clock = FakeClock()
    steady = [(1.0, [message(n)]) for n in range(2, 20)]
    more = Arrivals(clock, *steady)
    burst = await settle([message(1)], more, gap=3.0, cap=5.0, clock=clock.monotonic)
    assert [m.seq for m in burst] == [1, 2, 3, 4, 5, 6]
    assert more.waits[-1] == 1.0  # the cap, not the gap, bounded the last wait


async def test_the_operator_ends_the_gathering_at_once_and_goes_with_it() -> None:
    clock = FakeClock()
    more = Arrivals(clock, (0.5, [message(2, sender="operator", kind="operator")]))
    burst = await settle([message(1)], more, gap=3.0, cap=10.0, clock=clock.monotonic)
    assert [m.sender for m in burst] == ["alice", "operator"]
    assert more.waits == [3.0]  # nothing more was waited for


async def test_an_urgent_first_message_waits_for_nothing() -> None:
    clock = FakeClock()
    more = Arrivals(clock)
    burst = await settle([message(1, kind="control")], more, gap=3.0, cap=10.0)
    assert [m.seq for m in burst] == [1]
    assert more.waits == []
