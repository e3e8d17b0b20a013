"""Reading a ledger from its end: the latest decisions without reading the whole file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from caucus.ledger.verify import parse_line

BLOCK = 64 * 1024


def newest_first(path: Path) -> Iterator[dict[str, Any]]:
    """The ledger's records from the last to the first. Lines that are not records (a torn
    tail, damage) are skipped here: reporting them is `verify`'s job."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        position = handle.seek(0, 2)
        rest = b""
        while position > 0:
            size = min(BLOCK, position)
            position -= size
            handle.seek(position)
            lines = (handle.read(size) + rest).split(b"\n")
            rest = lines[0]  # may continue in the block before
            for raw in reversed(lines[1:]):
                record = _record(raw)
                if record is not None:
                    yield record
        record = _record(rest)
        if record is not None:
            yield record


def _record(raw: bytes) -> dict[str, Any] | None:
    if not raw.strip():
        return None
    parsed = parse_line(raw)
    return parsed if isinstance(parsed, dict) else None
