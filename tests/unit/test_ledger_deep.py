"""Deeply nested JSON is verified without recursion limits (the spec's step 3), and the
fallback parser and encoder agree with the standard library wherever that one works."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from caucus.ledger import deep
from caucus.ledger.canonical import GENESIS, canonical, line, seal
from caucus.ledger.chain import append
from caucus.ledger.verify import _Decoder, parse_line, verify_chain
from tests.unit.test_ledger_format import GOLDEN

DEPTH = 100_000


def nested_lists(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def nested_objects(depth: int, leaf: str = "1") -> str:
    return '{"k":' * depth + leaf + "}" * depth


def record_line(extra: str) -> bytes:
    """A sealed record whose extra field `deep` is the JSON text `extra`."""
    base = seal(GOLDEN, GENESIS)
    body = canonical(base)[:-1]
    return (body + ',"deep":' + extra + ',"hash":"' + "0" * 64 + '"}').encode()


def test_a_record_nested_a_hundred_thousand_deep_is_sealed_and_verifies(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    value: Any = 1
    for _ in range(DEPTH):
        value = [value]
    append(log, GOLDEN)
    append(log, {**GOLDEN, "deep": value})
    append(log, GOLDEN)
    report, _ = verify_chain(log)
    assert (report.count, report.broken, report.anchored) == (3, None, True)


def test_a_change_deep_inside_is_a_content_hash_mismatch(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    value: Any = {"leaf": 1}
    for _ in range(DEPTH):
        value = {"k": value}
    append(log, GOLDEN)
    append(log, {**GOLDEN, "deep": value})
    data = log.read_bytes()
    log.write_bytes(data.replace(b'"leaf":1', b'"leaf":2'))
    report, _ = verify_chain(log)
    assert report.broken is not None
    assert (report.broken.index, report.broken.reason) == (1, "content hash mismatch")


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        (nested_objects(DEPTH, '{"a":1,"a":2}'), "duplicate key"),
        (nested_lists(DEPTH, "1e999"), "non-finite number"),
        (nested_lists(DEPTH, "NaN"), "non-finite number"),
        (nested_lists(DEPTH, str(2**60)), "unsafe integer"),
        (nested_lists(DEPTH, '"\\ud800"'), "lone surrogate in string"),
        ("[" * DEPTH + "1" + "]" * (DEPTH - 1), "malformed record"),
        (nested_lists(DEPTH, "1,"), "malformed record"),
    ],
)
def test_deep_violations_get_the_reason_a_shallow_one_would(extra: str, reason: str) -> None:
    from caucus.ledger.verify import SURROGATE_ESCAPE, check_record

    raw = record_line(extra)
    decoder = _Decoder()
    parsed = parse_line(raw, decoder)
    if isinstance(parsed, str):
        assert parsed == reason
        return
    surrogates = SURROGATE_ESCAPE.search(raw) is not None
    assert check_record(parsed, numeric=decoder.numeric, surrogates=surrogates) == reason


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randint(-(2**60), 2**60)
    if kind == 2:
        return rng.choice([0.0, -0.0, 1e-7, 1e20, 0.1, 1e15, 123.456, -2.5e-300])
    if kind == 3:
        return rng.uniform(-1e6, 1e6)
    if kind in (4, 5):
        alphabet = 'ab"\\\n\t/é—😀\u0000\u001f'
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
    if kind in (6, 7):
        return {
            "".join(rng.choice("xyzé😀") for _ in range(rng.randrange(1, 4))): _random_value(
                rng, depth + 1
            )
            for _ in range(rng.randrange(4))
        }
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def test_the_fallbacks_agree_with_the_standard_library() -> None:
    rng = random.Random(20261201)
    decoder = _Decoder()
    for _ in range(2000):
        value = _random_value(rng)
        expected = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
        assert deep.dumps(value) == expected
        spaced = json.dumps(value, indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5)
        assert deep.loads(spaced, decoder._hooks) == json.loads(spaced)


@pytest.mark.parametrize(
    "text",
    ["", "[1,]", '{"a":1,}', "[1 2]", '{"a" 1}', "01", "[1]x", '"\u0001"', "tru", "-", "{'a':1}"],
)
def test_the_fallback_parser_refuses_what_the_standard_library_refuses(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    with pytest.raises(ValueError, match=r"(?i)expecting|extra data|control|unterminated"):
        deep.loads(text, _Decoder()._hooks)


def test_a_deep_sealed_record_is_stored_on_one_line() -> None:
    value: Any = []
    for _ in range(DEPTH):
        value = [value]
    text = line(seal({**GOLDEN, "deep": value}, GENESIS))
    assert "\n" not in text
    assert text.count("[") == DEPTH + 1 + 3  # and positions, dissent, evidence
