"""Reading stored values back: JSON columns that no later read may choke on."""

from __future__ import annotations

import json
from typing import Any


def stored_json(text: str) -> Any:
    """A JSON column as written. A lone UTF-16 surrogate (which the hub refuses now, but an
    older one stored) is read back as U+FFFD, so no value once stored can break a read."""
    value = json.loads(text)
    if "\\ud" in text or "\\uD" in text:
        value = _repaired(value)
    return value


def _repaired(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_repaired(v) for v in value]
    if isinstance(value, dict):
        return {_repaired(k): _repaired(v) for k, v in value.items()}
    return value


def names_json(names: list[str]) -> str:
    # Peer names are letters, digits, '.', '_' and '-': a JSON array needs no escaping.
    return '["' + '","'.join(names) + '"]' if names else "[]"
