"""The verifier's fast path (plain C parsing of canonical lines) never accepts a line the full
check would reject, and agrees with it on every line it accepts."""

from __future__ import annotations

import random

import pytest

from caucus.ledger.canonical import GENESIS, line, record_hash, seal
from caucus.ledger.verify import (
    SURROGATE_ESCAPE,
    _Decoder,
    _fast_link,
    check_record,
    parse_line,
    plain_decoder,
)
from tests.unit.test_ledger_format import GOLDEN

SEALED = line(seal({**GOLDEN, "extra": {"n": 7, "x": [1.5, "é"]}}, GENESIS))


def full_link(raw: bytes) -> tuple[str, str, bool] | str:
    """What the full check makes of a line: its link, or the reason it is not a record."""
    decoder = _Decoder()
    parsed = parse_line(raw, decoder)
    if isinstance(parsed, str):
        return parsed
    surrogates = SURROGATE_ESCAPE.search(raw) is not None
    reason = check_record(parsed, numeric=decoder.numeric, surrogates=surrogates)
    if reason is not None:
        return reason
    return parsed["prev_hash"], parsed["hash"], record_hash(parsed) == parsed["hash"]


def agree(raw: bytes) -> None:
    fast = _fast_link(raw, plain_decoder())
    if fast is not None:
        assert fast == full_link(raw), raw


def test_a_canonical_line_takes_the_fast_path() -> None:
    fast = _fast_link(SEALED.encode(), plain_decoder())
    assert fast is not None
    assert fast == full_link(SEALED.encode())
    assert fast[2] is True


@pytest.mark.parametrize(
    "text",
    [
        SEALED.replace('"n":7', '"n":7,"n":8'),  # a duplicate key
        SEALED.replace('"n":7', '"n":7, "m":1'),  # not canonical spacing
        SEALED.replace('"n":7', '"n":9007199254740993'),  # beyond 2^53
        SEALED.replace('"n":7', '"n":NaN'),
        SEALED.replace('"n":7', '"n":1e999'),
        SEALED.replace('"n":7', '"n":"\\ud800"'),  # a lone surrogate
        SEALED.replace('"n":7', '"n":"\\uD800"'),  # the same, in capitals
        SEALED.replace('"n":7', '"n":"\\u00E9"'),  # not canonical hex
        SEALED.replace('"extra"', '"hash":"' + "0" * 64 + '","extra"'),  # two top-level hashes
        SEALED.replace('"confidence":0.8', '"confidence":true'),
        SEALED.replace("1.5", "1.50"),
        SEALED + " ",
        SEALED.replace('{"confidence"', '{ "confidence"', 1),
    ],
)
def test_lines_that_are_not_canonical_take_the_full_check(text: str) -> None:
    assert _fast_link(text.encode(), plain_decoder()) is None


def test_a_nested_hash_key_does_not_confuse_it() -> None:
    digest = seal({**GOLDEN, "extra": {"n": 7, "x": [1.5, "é"]}}, GENESIS)["hash"]
    for nested in (digest, "1" * 64):
        raw = SEALED.replace('"n":7', '"n":{"hash":"' + nested + '"}').encode()
        fast = _fast_link(raw, plain_decoder())
        assert fast in (None, full_link(raw))
        assert full_link(raw) == (GENESIS, digest, False)


def test_random_damage_never_splits_the_two_paths() -> None:
    rng = random.Random(1201)
    base = SEALED.encode()
    alphabet = b'{}[]:,"\\0123456789eE.-+ aunltrfsh'
    for _ in range(5000):
        raw = bytearray(base)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(raw))
            action = rng.randrange(3)
            if action == 0:
                raw[at] = rng.choice(alphabet)
            elif action == 1:
                del raw[at]
            else:
                raw.insert(at, rng.choice(alphabet))
        agree(bytes(raw))
