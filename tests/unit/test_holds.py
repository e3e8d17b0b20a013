"""What a caller holds open (`services.holds`): counts, caps and release, against a model."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from caucus.domain.control import Role
from caucus.errors import CapStreams
from caucus.services.holds import Hold, HoldKind, Holds

OWNERS: list[int | Role] = [1, 2, 3, Role.OPERATOR]
KINDS = list(HoldKind)

steps = st.lists(
    st.one_of(
        st.tuples(st.just("take"), st.sampled_from(OWNERS), st.sampled_from(KINDS)),
        st.tuples(st.just("release"), st.integers(0, 50), st.just(None)),
        st.tuples(st.just("end"), st.sampled_from([1, 2, 3]), st.just(None)),
    ),
    max_size=60,
)


@given(steps)
def test_counts_caps_and_releases_match_a_model(ops: list[tuple[str, object, object]]) -> None:
    asyncio.run(_run(ops))  # a hold's `ended` is a future of the running loop


async def _run(ops: list[tuple[str, object, object]]) -> None:
    holds = Holds(per_identity=3, room=5, per_viewer=2)
    open_: list[Hold] = []
    for op, arg, kind in ops:
        if op == "take":
            owner = arg
            assert isinstance(owner, int | Role)
            assert isinstance(kind, HoldKind)
            mine = sum(1 for h in open_ if h.owner == owner)
            agents = sum(1 for h in open_ if isinstance(h.owner, int))
            agent = isinstance(owner, int)
            refused = mine >= (3 if agent else 2) or (agent and agents >= 5)
            if refused:
                with pytest.raises(CapStreams):
                    holds.take(owner, kind)
            else:
                open_.append(holds.take(owner, kind))
        elif op == "release" and open_:
            assert isinstance(arg, int)
            hold = open_.pop(arg % len(open_))
            hold.release()
            hold.release()  # a second release changes nothing
        elif op == "end":
            assert isinstance(arg, int)
            theirs = [h for h in open_ if h.owner == arg]
            assert holds.end(arg) == len(theirs)
            assert all(h.over for h in theirs)  # each holder is told; it releases as it stops
        for owner in OWNERS:
            assert holds.count(owner) == sum(1 for h in open_ if h.owner == owner)
            for k in KINDS:
                assert holds.count(owner, k) == sum(
                    1 for h in open_ if h.owner == owner and h.kind is k
                )
        assert holds.agents == sum(1 for h in open_ if isinstance(h.owner, int))
        assert holds.holders() == {h.owner for h in open_ if isinstance(h.owner, int)}
