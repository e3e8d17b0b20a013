"""Appending to a ledger and anchoring its head.

Appends hold an exclusive lock on `<log>.lock` from reading the tip to replacing the checkpoint,
so two hub processes sharing a ledger never fork the chain. The line is fsynced before the
checkpoint moves: a crash leaves either the old checkpoint (the new line is then reported, never
silently kept or dropped) or both.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from caucus.errors import LedgerIntegrityError
from caucus.files import replace_atomically
from caucus.ledger.canonical import line, seal
from caucus.ledger.verify import head_path, verify_chain


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock = path.with_name(path.name + ".lock")
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def append(path: Path, record: Mapping[str, Any]) -> dict[str, Any]:
    """Chain `record` onto the ledger; refuses a ledger that does not verify."""
    return append_many(path, [record])[0]


def append_many(path: Path, batch: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chain a batch under one lock and one verification: one fsync, one checkpoint move."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        report, _ = verify_chain(path)
        if report.broken is not None:
            broken = report.broken
            raise LedgerIntegrityError(
                f"the ledger {path} fails verification at record {broken.index}: {broken.reason}; "
                f"run `caucus verify {path}` and restore it before new decisions are recorded"
            )
        sealed: list[dict[str, Any]] = []
        tip = report.head_hash
        for record in batch:
            sealed.append(seal(record, tip))
            tip = sealed[-1]["hash"]
        if not sealed:
            return sealed
        with path.open("ab") as handle:
            handle.write(b"".join(line(r).encode("ascii") + b"\n" for r in sealed))
            handle.flush()
            os.fsync(handle.fileno())
        checkpoint = {"count": report.count + len(sealed), "head_hash": tip}
        text = json.dumps(checkpoint, separators=(",", ":")) + "\n"
        replace_atomically(head_path(path), text.encode("ascii"), durable=True)
        return sealed


def anchors_path(path: Path) -> Path:
    return path.with_name(path.name + ".anchors")


def anchor(path: Path, *, now: datetime | None = None) -> dict[str, Any]:
    """Append the verified head to `<log>.anchors`, for the operator to copy off the machine."""
    with _locked(path):
        report, _ = verify_chain(path)
        if report.broken is not None:
            raise LedgerIntegrityError(
                f"refusing to anchor {path}: record {report.broken.index}: {report.broken.reason}"
            )
        entry = {
            "anchored_at": (now or datetime.now(UTC)).isoformat(),
            "count": report.count,
            "head_hash": report.head_hash,
        }
        with anchors_path(path).open("a", encoding="ascii") as handle:
            handle.write(json.dumps(entry, separators=(",", ":")) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return entry
