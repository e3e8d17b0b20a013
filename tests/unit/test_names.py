import pytest

from caucus.domain.names import TargetKind, check_channel_name, check_peer_name, parse_target
from caucus.errors import InvalidRequest


@pytest.mark.parametrize("name", ["a", "alice", "A.b_c-9", "x" * 64])
def test_valid_peer_names_are_accepted(name: str) -> None:
    assert check_peer_name(name) == name


@pytest.mark.parametrize(
    "name", ["", "x" * 65, "has space", "emoji🙂", "a/b", "#chan", "a:b", ".", "..", "..."]
)
def test_malformed_peer_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidRequest):
        check_peer_name(name)


@pytest.mark.parametrize("name", ["all", "human", "operator", "hub", "system", "ALL", "Operator"])
def test_reserved_peer_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidRequest, match="reserved"):
        check_peer_name(name)


def test_channel_names_are_canonicalised_with_a_hash() -> None:
    assert check_channel_name("dev") == "#dev"
    assert check_channel_name("#dev") == "#dev"
    with pytest.raises(InvalidRequest):
        check_channel_name("#")
    with pytest.raises(InvalidRequest):
        check_channel_name("#no spaces")
    for dots in ("#.", "..", "#..."):
        with pytest.raises(InvalidRequest):
            check_channel_name(dots)


def test_targets_are_peer_all_or_channel() -> None:
    assert parse_target("all").kind is TargetKind.ALL
    assert parse_target("#ops").kind is TargetKind.CHANNEL
    assert parse_target("bob").kind is TargetKind.PEER
    with pytest.raises(InvalidRequest):
        parse_target("operator")
    with pytest.raises(InvalidRequest):
        parse_target("not valid")
