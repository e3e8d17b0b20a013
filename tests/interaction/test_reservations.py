"""File reservations over HTTP with `HubClient` (issue 34): granted, listed and released;
conflicts reported with holder and expiry where the room is advisory and refused where it
enforces; shared beside shared; void once the holder leaves or is kicked; bad patterns and the
cap refused with their codes; and which files of a commit another's reservation blocks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from caucus.client import HubClient
from caucus.errors import CapReservations, InvalidRequest, ReservationsHeld
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.conftest import ClientFactory


async def test_a_reservation_is_granted_listed_renewed_and_released(
    connect: ClientFactory, url: str
) -> None:
    alice = await connect("alice")
    done = await alice.reserve(["src/app.py", "./docs/", "src/app.py"], reason="refactor")
    assert [r.pattern for r in done.reservations] == ["src/app.py", "docs/"]
    assert done.conflicts == []
    assert done.policy == "advisory"
    assert all(r.holder == "alice" and r.exclusive for r in done.reservations)
    first = done.reservations[0]
    assert first.expires_at - first.created_at == pytest.approx(3600)
    # Anyone who may see the room sees what stands (the pre-commit guard reads it so).
    async with httpx2.AsyncClient(base_url=url) as anyone:
        standing = (await anyone.get("/reservations")).json()
    assert [r["pattern"] for r in standing["reservations"]] == ["src/app.py", "docs/"]
    renewed = (await alice.renew(ids=[first.reservation_id], ttl=7200)).reservations
    assert [r.reservation_id for r in renewed] == [first.reservation_id]
    assert renewed[0].expires_at > first.expires_at
    # Taken again, a pattern keeps its id and takes the new terms.
    again = await alice.reserve(["docs/"], exclusive=False)
    assert again.reservations[0].reservation_id == done.reservations[1].reservation_id
    assert not again.reservations[0].exclusive
    released = (await alice.release(paths=["src/app.py"])).reservations
    assert [r.pattern for r in released] == ["src/app.py"]
    assert [r.pattern for r in (await alice.reservations()).reservations] == ["docs/"]
    assert [r.pattern for r in (await alice.release(all=True)).reservations] == ["docs/"]
    assert (await alice.reservations()).reservations == []


async def test_an_overlap_is_granted_with_its_holder_and_expiry_reported(
    connect: ClientFactory,
) -> None:
    alice, bob, carol, dave = [await connect(n) for n in ("alice", "bob", "carol", "dave")]
    held = (await alice.reserve(["src/"], reason="moving things")).reservations[0]
    got = await bob.reserve(["src/app.py", "README.md"])
    assert [r.pattern for r in got.reservations] == ["src/app.py", "README.md"]
    (conflict,) = got.conflicts
    assert (conflict.pattern, conflict.holder, conflict.held) == ("src/app.py", "alice", "src/")
    assert conflict.exclusive
    assert conflict.expires_at == held.expires_at
    # Shared beside shared meets nothing; an exclusive one meets every other holder's.
    assert (await carol.reserve(["CHANGELOG.md"], exclusive=False)).conflicts == []
    assert (await bob.reserve(["CHANGELOG.md"], exclusive=False)).conflicts == []
    found = (await dave.reserve(["*.md"])).conflicts
    assert sorted((c.holder, c.held) for c in found) == [
        ("bob", "CHANGELOG.md"),
        ("bob", "README.md"),
        ("carol", "CHANGELOG.md"),
    ]
    # One's own never conflict.
    assert (await alice.reserve(["src/**/*.py"])).conflicts[0].holder == "bob"


@pytest.fixture
async def enforcing(tmp_path: Path) -> AsyncIterator[tuple[Hub, str]]:
    settings = {"reservations": "enforce", "reservations_per_peer_max": 3}
    async with make_hub(tmp_path, **settings) as hub, serve(hub) as url:
        yield hub, url


async def test_an_enforcing_room_refuses_a_conflicting_reservation_whole(
    enforcing: tuple[Hub, str],
) -> None:
    _, url = enforcing
    async with HubClient(url) as alice, HubClient(url) as bob:
        await alice.register("alice")
        await bob.register("bob")
        held = (await alice.reserve(["src/parser/"])).reservations[0]
        with pytest.raises(ReservationsHeld) as refused:
            await bob.reserve(["docs/index.md", "src/parser/lex.py"])
        assert "src/parser/lex.py meets alice's exclusive src/parser/" in refused.value.detail
        assert refused.value.extra["conflicts"] == [
            {
                "pattern": "src/parser/lex.py",
                "holder": "alice",
                "held": "src/parser/",
                "exclusive": True,
                "expires_at": held.expires_at,
            }
        ]
        assert (await bob.reservations(holder="bob")).reservations == []  # nothing granted
        async with httpx2.AsyncClient(base_url=url) as raw:
            reply = await raw.post(
                "/reservations",
                json={"paths": ["src/parser/lex.py"]},
                headers={"authorization": f"Bearer {bob.token}"},
            )
        assert reply.status_code == 409
        assert reply.json()["error"] == "reservation_conflict"
        ok = await bob.reserve(["docs/"])
        assert ok.policy == "enforce"
        assert [r.pattern for r in ok.reservations] == ["docs/"]


async def test_the_cap_and_bad_patterns_are_refused_with_their_codes(
    enforcing: tuple[Hub, str],
) -> None:
    _, url = enforcing
    async with HubClient(url) as alice:
        await alice.register("alice")
        for bad in (["/etc/passwd"], ["../elsewhere.py"], ["src\\app.py"], [], ["!src/"], [" "]):
            with pytest.raises(InvalidRequest):
                await alice.reserve(bad)
        with pytest.raises(InvalidRequest):
            await alice.reserve([f"f{i}" for i in range(51)])
        await alice.reserve(["a", "b", "c"])
        with pytest.raises(CapReservations):
            await alice.reserve(["d"])
        await alice.reserve(["a", "b"], reason="taken again: not more of them")
        with pytest.raises(InvalidRequest):
            await alice.reserve(["e"], ttl=10)


async def test_what_its_holder_leaving_or_a_kick_ends_stands_no_longer(
    connect: ClientFactory, operator: OperatorClient, live_hub: Hub
) -> None:
    alice, bob, carol = [await connect(n) for n in ("alice", "bob", "carol")]
    await alice.reserve(["src/"])
    await bob.reserve(["docs/"])
    await carol.reserve(["tests/"])
    await alice.leave()
    await operator.kick("bob")
    assert [r.holder for r in (await carol.reservations()).reservations] == ["carol"]
    # A newcomer under a freed name does not inherit them, and the sweep deletes them.
    alice_again = await connect("alice")
    assert (await alice_again.reserve(["src/app.py"])).conflicts == []
    await live_hub.maintain()
    assert [r.holder for r in (await carol.reservations()).reservations] == ["carol", "alice"]


async def test_the_files_another_agent_s_exclusive_reservation_covers_are_named(
    connect: ClientFactory,
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.reserve(["src/**/*.py"], reason="typing pass")
    await alice.reserve(["docs/"], exclusive=False)
    staged = ["src/caucus/app.py", "README.md", "docs/index.md", "srcx/a.py", "!odd\\name"]
    blocked = await bob.blocked(staged, holder="bob")
    assert [(b.path, b.reservation.pattern) for b in blocked] == [
        ("src/caucus/app.py", "src/**/*.py")
    ]
    assert blocked[0].reservation.reason == "typing pass"
    assert await bob.blocked(staged, holder="alice") == []


async def test_the_operator_switches_the_room_to_enforce_and_back(
    connect: ClientFactory, operator: OperatorClient, url: str
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.reserve(["src/"])
    assert (await bob.reserve(["src/a.py"])).policy == "advisory"  # granted, reported
    assert (await operator.set_reservation_policy("enforce")).policy == "enforce"
    with pytest.raises(ReservationsHeld):
        await bob.reserve(["src/b.py"])
    assert (await bob.reservations()).policy == "enforce"
    # Only the operator may, and only to a policy there is.
    async with httpx2.AsyncClient(base_url=url) as raw:
        as_agent = await raw.post(
            "/operator/reservations/policy",
            json={"policy": "advisory"},
            headers={"authorization": f"Bearer {alice.token}"},
        )
        assert as_agent.status_code == 403
    with pytest.raises(InvalidRequest):
        await operator.set_reservation_policy("strict")
    await operator.set_reservation_policy("advisory")
    assert (await bob.reserve(["src/b.py"])).conflicts[0].holder == "alice"
