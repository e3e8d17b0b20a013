"""An independent verifier of the decision-record format, written from
../shared/specs/decision-record.md alone (no Caucus code), so that a ledger Caucus writes is
checked by something that did not learn the format from Caucus."""

from __future__ import annotations

import hashlib
import json
import math
from datetime import datetime
from pathlib import Path
from typing import Any

GENESIS = "0" * 64
FIELDS = (
    "schema_version",
    "timestamp",
    "subject",
    "positions",
    "decision",
    "dissent",
    "confidence",
    "evidence",
    "prev_hash",
    "hash",
)


def _string(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        short = {
            '"': '\\"',
            "\\": "\\\\",
            "\n": "\\n",
            "\r": "\\r",
            "\t": "\\t",
            "\b": "\\b",
            "\f": "\\f",
        }
        if ch in short:
            out.append(short[ch])
        elif code < 0x20 or 0x7F < code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        elif code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        assert abs(value) <= 2**53
        return str(value)
    if isinstance(value, float):
        assert math.isfinite(value)
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    assert isinstance(value, dict)
    items = sorted(value.items())
    return "{" + ",".join(f"{_string(k)}:{canonical(v)}" for k, v in items) + "}"


def record_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(canonical(body).encode("ascii")).hexdigest()


def _position(p: Any) -> bool:
    return (
        isinstance(p, dict)
        and isinstance(p.get("agent"), str)
        and isinstance(p.get("stance"), str)
        and isinstance(p.get("summary"), str)
        and type(p.get("confidence")) in (int, float)
        and 0 <= p["confidence"] <= 1
    )


def verify(path: Path) -> tuple[int, bool]:
    """(records, anchored); AssertionError names the first bad record."""
    lines = [ln for ln in path.read_bytes().split(b"\n") if ln.strip()]
    prev = GENESIS
    for i, raw in enumerate(lines):
        r = json.loads(raw.decode("utf-8"))
        assert all(f in r for f in FIELDS), f"record {i}: malformed record"
        assert r["schema_version"] in ("0.1", "0.2"), f"record {i}: unsupported schema version"
        assert all(_position(p) for p in r["positions"]), f"record {i}: positions"
        assert all(_position(p) for p in r["dissent"]), f"record {i}: dissent"
        assert all(
            isinstance(e, dict)
            and isinstance(e.get("source"), str)
            and isinstance(e.get("ref"), str)
            for e in r["evidence"]
        ), f"record {i}"
        assert type(r["confidence"]) in (int, float)
        assert 0 <= r["confidence"] <= 1
        stamp = datetime.fromisoformat(r["timestamp"])
        assert stamp.utcoffset() is not None
        assert stamp.utcoffset().total_seconds() == 0
        assert (r["schema_version"] == "0.2") == ("rounds" in r), f"record {i}: rounds"
        if "rounds" in r:
            assert all(isinstance(x, list) and all(_position(p) for p in x) for x in r["rounds"])
        assert r["prev_hash"] == prev, f"record {i}: broken chain link"
        assert record_hash(r) == r["hash"], f"record {i}: content hash mismatch"
        prev = r["hash"]
    head = path.with_name(path.name + ".head")
    if not head.exists():
        return len(lines), False
    checkpoint = json.loads(head.read_text())
    assert checkpoint == {"count": len(lines), "head_hash": prev}, "head checkpoint mismatch"
    return len(lines), True
