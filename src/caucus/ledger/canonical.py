"""The canonical text and hash of a decision record (../shared/specs/decision-record.md).

The format is defined by Python's own JSON writer, so the canonical form is `json.dumps` with
sorted keys, no whitespace and ASCII escapes; `repr`-style floats come with it for free.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

from caucus.ledger import deep

GENESIS = "0" * 64
# Built once: json.dumps with non-default options constructs an encoder on every call, and
# verification encodes every record of the ledger.
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
)
_C_ENCODER = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None, _ENCODER.default, encode_basestring_ascii, None, ":", ",", True, False, False
    )
)


def encode(value: Any) -> str:
    """Canonical JSON text of any value (ValueError for NaN and infinities)."""
    try:
        if _C_ENCODER is None:
            return _ENCODER.encode(value)
        return "".join(_C_ENCODER(value, 0))
    except RecursionError:
        return deep.dumps(value)


def canonical(record: Mapping[str, Any]) -> str:
    """The hashed text: every field but `hash`."""
    return encode({key: value for key, value in record.items() if key != "hash"})


def record_hash(record: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(record).encode("ascii")).hexdigest()


def seal(record: Mapping[str, Any], prev_hash: str) -> dict[str, Any]:
    """The record chained after `prev_hash`, with its hash filled in."""
    sealed = {key: value for key, value in record.items() if key != "hash"}
    sealed["prev_hash"] = prev_hash
    sealed["hash"] = record_hash(sealed)
    return sealed


def line(record: Mapping[str, Any]) -> str:
    """How a sealed record is stored: its canonical text plus the hash, one line."""
    return encode(dict(record))
