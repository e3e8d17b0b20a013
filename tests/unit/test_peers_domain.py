import pytest

from caucus.domain.peers import (
    Liveness,
    Peer,
    PeerState,
    check_status,
    liveness,
    normalize_skills,
)
from caucus.errors import InvalidRequest


def _peer(last_seen: float, state: PeerState = PeerState.ACTIVE) -> Peer:
    return Peer(1, "a", b"h", state, created_at=0.0, last_seen=last_seen)


@pytest.mark.parametrize(
    ("idle", "expected"),
    [
        (0, Liveness.ONLINE),
        (59, Liveness.ONLINE),
        (60, Liveness.QUIET),
        (179, Liveness.QUIET),
        (180, Liveness.STALE),
        (10_000, Liveness.STALE),
    ],
)
def test_liveness_follows_idle_time(idle: float, expected: Liveness) -> None:
    got = liveness(
        _peer(1000.0 - idle), now=1000.0, listening=False, quiet_after=60, stale_after=180
    )
    assert got is expected


def test_a_listening_peer_is_online_however_long_ago_it_was_seen() -> None:
    got = liveness(_peer(0.0), now=1000.0, listening=True, quiet_after=60, stale_after=180)
    assert got is Liveness.ONLINE


def test_a_reaped_peer_is_reaped() -> None:
    got = liveness(
        _peer(999.0, PeerState.REAPED), now=1000.0, listening=False, quiet_after=60, stale_after=180
    )
    assert got is Liveness.REAPED


def test_skills_accept_strings_and_objects_in_one_shape() -> None:
    skills = normalize_skills(["python", {"id": "sql", "name": "SQL", "tags": ["db"]}])
    assert skills == [
        {"id": "python", "name": "python"},
        {"id": "sql", "name": "SQL", "tags": ["db"]},
    ]


@pytest.mark.parametrize("bad", ["python", [1], [{"id": ""}], [{"id": "x", "bogus": 1}]])
def test_malformed_skills_are_rejected(bad: object) -> None:
    with pytest.raises(InvalidRequest):
        normalize_skills(bad)


def test_status_is_one_short_line() -> None:
    assert check_status("reviewing PR 12") == "reviewing PR 12"
    with pytest.raises(InvalidRequest):
        check_status("x" * 281)
    with pytest.raises(InvalidRequest):
        check_status("two\nlines")
