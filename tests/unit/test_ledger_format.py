"""The decision record format, byte for byte: the spec's golden vector and float spellings."""

from __future__ import annotations

import pytest

from caucus.ledger.canonical import GENESIS, canonical, record_hash, seal
from caucus.ledger.verify import check_record, parse_line

GOLDEN = {
    "schema_version": "0.1",
    "timestamp": "2026-07-11T00:00:00+00:00",
    "subject": "Ship v0.1? — héllo",
    "positions": [{"agent": "a1", "stance": "yes", "summary": "ready", "confidence": 1.0}],
    "decision": "yes",
    "dissent": [],
    "confidence": 0.8,
    "evidence": [{"source": "spec", "ref": "SPEC.md"}],
    "prev_hash": GENESIS,
}


def test_the_golden_vector_hashes_as_the_spec_says() -> None:
    assert record_hash(GOLDEN) == "06624a603d2f031db60ad142d28addd8f3483d08ebfc2be16e140753d9bc221d"
    text = canonical(GOLDEN)
    assert "\\u2014" in text  # non-ASCII escaped, lowercase hex
    assert "h\\u00e9llo" in text
    assert " " not in text.replace("Ship v0.1?", "").replace(" \\u2014 ", "")


@pytest.mark.parametrize(
    ("value", "spelling"),
    [
        (0.8, "0.8"),
        (1.0, "1.0"),
        (1e-7, "1e-07"),
        (1e20, "1e+20"),
        (-0.0, "-0.0"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (1e15, "1000000000000000.0"),
    ],
)
def test_floats_are_spelled_as_the_spec_says(value: float, spelling: str) -> None:
    assert canonical({"x": value}) == '{"x":' + spelling + "}"


def test_the_hash_covers_unknown_fields_and_prev_hash() -> None:
    base = seal(GOLDEN, GENESIS)
    assert seal({**GOLDEN, "extra": 1}, GENESIS)["hash"] != base["hash"]
    assert seal(GOLDEN, "1" * 64)["hash"] != base["hash"]


def _reason(**changes: object) -> str | None:
    record = {**seal(GOLDEN, GENESIS), **changes}
    return check_record(record)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"schema_version": "0.3"}, "unsupported schema version"),
        ({"subject": 1}, "invalid subject type"),
        ({"decision": None}, "invalid decision type"),
        ({"timestamp": 0}, "invalid timestamp type"),
        ({"positions": {}}, "invalid positions structure"),
        ({"dissent": "no"}, "invalid dissent structure"),
        ({"evidence": None}, "invalid evidence structure"),
        ({"positions": [{"agent": "a"}]}, "invalid positions entry"),
        (
            {"dissent": [{"agent": "a", "stance": "n", "summary": "s", "confidence": 2}]},
            "invalid dissent entry",
        ),
        ({"evidence": [{"source": "s"}]}, "invalid evidence entry"),
        ({"confidence": True}, "invalid confidence"),
        ({"confidence": 1.5}, "invalid confidence"),
        ({"hash": "ABC"}, "invalid hash format"),
        ({"prev_hash": "0" * 63}, "invalid prev_hash format"),
        ({"timestamp": "yesterday"}, "invalid timestamp"),
        ({"timestamp": "2026-07-11T00:00:00+02:00"}, "timestamp not UTC"),
        ({"timestamp": "2026-07-11T00:00:00"}, "timestamp not UTC"),
        ({"schema_version": "0.2"}, "schema 0.2 requires rounds"),
        ({"rounds": []}, "rounds not allowed in schema 0.1"),
        ({"schema_version": "0.2", "rounds": {}}, "invalid rounds structure"),
        ({"schema_version": "0.2", "rounds": [[{"agent": 1}]]}, "invalid rounds entry"),
        ({"note": "\ud800"}, "lone surrogate in string"),
        ({"note": [2**53 + 1]}, "unsafe integer"),
        ({"note": {"deep": float("inf")}}, "non-finite number"),
    ],
)
def test_each_constraint_fails_with_its_own_reason(changes: dict[str, object], reason: str) -> None:
    assert _reason(**changes) == reason


def test_the_timestamp_accepts_z_and_a_valid_record_passes() -> None:
    assert _reason() is None
    assert _reason(timestamp="2026-07-11T00:00:00Z") is None
    assert _reason(schema_version="0.2", rounds=[[], GOLDEN["positions"]]) is None


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xff\xfe", "invalid encoding"),
        (b"[1, 2]", "malformed record"),
        (b'{"subject": "x"}', "malformed record"),
        (b"{not json", "malformed record"),
        (b'{"a": {"b": 1, "b": 2}}', "duplicate key"),
    ],
)
def test_lines_that_are_not_records_say_why(raw: bytes, reason: str) -> None:
    assert parse_line(raw) == reason


def test_nan_in_the_text_is_a_numeric_violation() -> None:
    text = canonical(seal(GOLDEN, GENESIS))[:-1] + ',"hash":"' + "0" * 64 + '","x":NaN}'
    parsed = parse_line(text.encode())
    assert isinstance(parsed, dict)
    assert check_record(parsed) == "non-finite number"
