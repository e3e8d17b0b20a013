import pytest

from caucus.errors import NotFound
from caucus.protocol import CORE_LIMIT, core_text, section, section_names


def test_the_core_protocol_is_short_enough_to_read_on_join() -> None:
    text = core_text()
    assert 500 < len(text) < CORE_LIMIT
    for must in ("receive", "ack", "#channel", "all", "idempotency_key", "retry_after"):
        assert must in text


def test_every_listed_section_is_readable() -> None:
    assert {"delivery", "channels", "liveness", "errors"} <= set(section_names())
    for name in section_names():
        assert section(name).startswith("# ")


def test_an_unknown_section_lists_the_real_ones() -> None:
    with pytest.raises(NotFound) as caught:
        section("nope")
    assert caught.value.extra["sections"] == list(section_names())
