"""Appending to a ledger and anchoring its head.

Appends hold an exclusive lock on `<log>.lock` from reading the tip to replacing the checkpoint,
so two hub processes sharing a ledger never fork the chain. The line is fsynced before the
checkpoint moves: a crash leaves either the old checkpoint (the new line is then reported, never
silently kept or dropped) or both. A writer that noted what it was about to append (`Intents`)
moves a lagging checkpoint over its own records by itself; anything else past the checkpoint
still halts appends until a person looks.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

from caucus.errors import LedgerIntegrityError
from caucus.files import open_private, private_dir, replace_atomically
from caucus.ledger.canonical import GENESIS, line
from caucus.ledger.records import DecisionRecord, seal_checked
from caucus.ledger.verify import Report, head_path, read_checkpoint, verify_chain

log = logging.getLogger(__name__)


def _lock(handle: IO[Any]) -> None:
    """An exclusive lock on the lock file: flock where it exists, msvcrt's byte lock on
    Windows (imported there only, so the ledger imports and verifies on every platform)."""
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
    else:
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_EX)


def _unlock(handle: IO[Any]) -> None:
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock = path.with_name(path.name + ".lock")
    private_dir(path.parent)
    with open_private(lock, "a") as handle:
        _lock(handle)
        try:
            yield
        finally:
            _unlock(handle)


def append(path: Path, record: Mapping[str, Any]) -> dict[str, Any]:
    """Chain `record` onto the ledger; refuses a ledger that does not verify."""
    return append_many(path, [record])[0]


def append_many(path: Path, batch: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chain a batch under one lock and one verification: one fsync, one checkpoint move."""
    return [sealed for _, sealed in Ledger(path).append_many(batch)]


Stamp = tuple[int, int, int, int] | None


class Intents(Protocol):
    """Where a writer notes, durably and before writing, the hashes it is about to append."""

    def note(self, hashes: list[str]) -> None: ...

    def written(self) -> set[str]: ...

    def clear(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Recovery:
    """A lagging checkpoint moved over records this hub's intents vouched for."""

    from_count: int
    to_count: int
    at: float


def _stamp(path: Path) -> Stamp:
    """What changes whenever a file is written: inode, size, and modification and change
    times (the change time cannot be set back by anyone short of changing the clock)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Ledger:
    """One process's writer of a ledger file.

    It verifies the whole chain before its first append and again whenever the file or its
    checkpoint changed since its own last write (another process appended, or someone edited
    it); otherwise the chain it verified and extended itself is still the chain on disk, and a
    full pass per decision would cost seconds on a large ledger.
    """

    def __init__(self, path: Path, intents: Intents | None = None) -> None:
        self.path = path
        self.intents = intents
        self.report: Report | None = None  # the last full verification, kept up to date
        self.recovered: Recovery | None = None
        self._stamps: tuple[Stamp, Stamp] | None = None

    def _current(self) -> tuple[Stamp, Stamp]:
        return _stamp(self.path), _stamp(head_path(self.path))

    def _verified(self) -> Report:
        """Under the lock: the chain's report, verifying again only if the files changed."""
        if self.report is None or self._stamps != self._current():
            self.report, _ = verify_chain(self.path)
            self._stamps = self._current()
        return self.report

    def status(self) -> Report:
        """The ledger's verification now (a full pass only when the files changed), after
        moving a checkpoint that lags this writer's own records: a reader asking before the
        next append sees the ledger as that append would find it."""
        with _locked(self.path):
            report = self._verified()
            if report.broken is not None and self.intents is not None:
                report, _ = self._recover(report, self.intents)
            return report

    def append_many(self, batch: Iterable[Mapping[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
        """Chain `batch`; returns each appended record with its index."""
        with _locked(self.path):
            return self._append(self._checked(), list(batch))

    def record(self, decision: DecisionRecord) -> tuple[int, dict[str, Any]]:
        """Chain one decision; returns its index and the sealed record."""
        return self.append_many([decision.to_dict()])[0]

    def append_new(
        self,
        batch: Iterable[Mapping[str, Any]],
        *,
        key: Callable[[Mapping[str, Any]], str | None],
        already: Callable[[], Mapping[str, str]],
    ) -> tuple[list[tuple[int, dict[str, Any]]], dict[str, str]]:
        """Chain the records of `batch` whose `key` is not in the ledger yet, as `already`
        (key -> hash) finds it under the same lock, so two writers never record one thing
        twice. Returns what was appended and what was found already there."""
        with _locked(self.path):
            report = self._checked()
            found = dict(already())
            fresh = [r for r in batch if key(r) not in found]
            return self._append(report, fresh), found

    def _checked(self) -> Report:
        report = self._verified()
        refused: str | None = None
        if report.broken is not None and self.intents is not None:
            report, refused = self._recover(report, self.intents)
        if report.broken is not None:
            broken = report.broken
            if refused is not None:  # why the hub would not move the checkpoint itself
                raise LedgerIntegrityError(
                    f"the ledger {self.path} fails verification at record {broken.index}: "
                    f"{broken.reason}, and {refused}"
                )
            raise LedgerIntegrityError(
                f"the ledger {self.path} fails verification at record {broken.index}: "
                f"{broken.reason}; run `caucus verify {self.path}` and restore it before "
                "new decisions are recorded"
            )
        return report

    def _recover(self, report: Report, intents: Intents) -> tuple[Report, str | None]:
        """A checkpoint that lags records this writer noted before writing them (a crash
        between the fsync and the checkpoint's move) is moved over them; the report stands
        as it was for anything else, with why it was not moved when it lagged."""
        assert report.broken is not None
        if report.broken.reason != TAIL_MISMATCH:
            return report, None
        try:
            old, new = _accept_tail(self.path, intents.written())
        except LedgerIntegrityError as exc:
            log.error("the decision ledger was not recovered: %s", exc.detail)
            return report, exc.detail
        log.warning(
            "decision ledger %s: moved the head checkpoint from %d to %d records over records "
            "this hub noted before a crash interrupted it",
            self.path,
            old,
            new,
        )
        self.recovered = Recovery(old, new, time.time())
        intents.clear()
        self.report = None
        return self._verified(), None

    def _append(
        self, report: Report, records: list[Mapping[str, Any]]
    ) -> list[tuple[int, dict[str, Any]]]:
        sealed: list[tuple[int, dict[str, Any]]] = []
        tip = report.head_hash
        for record in records:
            sealed.append((report.count + len(sealed), seal_checked(record, tip)))
            tip = sealed[-1][1]["hash"]
        if not sealed:
            return sealed
        if self.intents is not None:
            self.intents.note([r["hash"] for _, r in sealed])
        with open_private(self.path) as handle:
            handle.write(b"".join(line(r).encode("ascii") + b"\n" for _, r in sealed))
            handle.flush()
            os.fsync(handle.fileno())
        count = report.count + len(sealed)
        text = json.dumps({"count": count, "head_hash": tip}, separators=(",", ":")) + "\n"
        replace_atomically(head_path(self.path), text.encode("ascii"), durable=True)
        self.report = Report(count, tip, True)
        self._stamps = self._current()
        if self.intents is not None:
            self.intents.clear()
        return sealed


TAIL_MISMATCH = "head checkpoint mismatch (possible truncation)"


def accept_tail(path: Path) -> tuple[int, int]:
    """Move a lagging head checkpoint to the end of the chain; returns (old, new) counts.

    A writer that dies between fsyncing its records and moving the checkpoint leaves records
    past the checkpoint, and the ledger then fails verification (and refuses appends) until an
    operator looks. This is that explicit step, and it only ever moves the checkpoint forward:
    every record must verify, and the old checkpoint must name a record of this chain, so a
    deleted or rewritten tail is still refused.
    """
    with _locked(path):
        return _accept_tail(path, None)


def _accept_tail(path: Path, vouched: set[str] | None) -> tuple[int, int]:
    """Under the lock: `accept_tail`, over only records whose hashes are `vouched` for (the
    writer's own intents) unless None (a person said so)."""
    report, hashes = verify_chain(path)
    if report.broken is None:
        return report.count, report.count
    if report.broken.reason != TAIL_MISMATCH:
        raise LedgerIntegrityError(
            f"record {report.broken.index}: {report.broken.reason}; only a checkpoint that "
            "lags the chain can be accepted. Restore the ledger from a copy"
        )
    checkpoint = read_checkpoint(path)
    assert isinstance(checkpoint, tuple)
    count, head = checkpoint
    if count >= len(hashes) or (hashes[count - 1] if count else GENESIS) != head:
        raise LedgerIntegrityError(
            f"the head checkpoint ({count} records, head {head[:12]}) names no record of "
            "this chain: records were deleted or rewritten. Restore the ledger from a copy"
        )
    if vouched is not None:
        foreign = [i for i in range(count, len(hashes)) if hashes[i] not in vouched]
        if foreign:
            raise LedgerIntegrityError(
                f"record {foreign[0]} past the head checkpoint was not written by this hub "
                f"({len(foreign)} such); run `caucus verify {path}` and, if the records are "
                f"genuine, `caucus anchor --accept-tail {path}`"
            )
    text = json.dumps({"count": len(hashes), "head_hash": hashes[-1]}, separators=(",", ":"))
    replace_atomically(head_path(path), (text + "\n").encode("ascii"), durable=True)
    return count, len(hashes)


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
        with open_private(anchors_path(path), "a") as handle:
            handle.write(json.dumps(entry, separators=(",", ":")) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return entry
