"""Retention: what the hub drops once it is finished with, and what it says it dropped."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PurgeCounts:
    """What one pass dropped (or, in a dry run, would drop)."""

    messages: int = 0
    tasks: int = 0
    offers: int = 0
    forms: int = 0
    newest_ts: float | None = None  # of the newest message dropped
    newest_seq: int | None = None

    def __add__(self, other: PurgeCounts) -> PurgeCounts:
        def newest(a: float | None, b: float | None) -> float | None:
            return b if a is None else a if b is None else max(a, b)

        seq = newest(self.newest_seq, other.newest_seq)
        return PurgeCounts(
            self.messages + other.messages,
            self.tasks + other.tasks,
            self.offers + other.offers,
            self.forms + other.forms,
            newest(self.newest_ts, other.newest_ts),
            int(seq) if seq is not None else None,
        )

    @property
    def total(self) -> int:
        return self.messages + self.tasks + self.offers + self.forms


@dataclass(frozen=True, slots=True)
class StoreSize:
    used_bytes: int  # pages holding data
    file_bytes: int  # the file, free pages included
    incremental: bool  # free pages can be given back without a full VACUUM


@dataclass(frozen=True, slots=True)
class Dropped:
    """What retention has dropped so far, for the console's history and the export."""

    messages: int
    through_seq: int | None  # messages up to this seq may be gone
    through_ts: float | None
    at: float | None  # the last purge that dropped something


@dataclass(frozen=True, slots=True)
class PurgeReport:
    dropped: PurgeCounts
    before: float  # the cut-off: finished items older than this were eligible
    dry_run: bool
    size_before: StoreSize
    size_after: StoreSize
