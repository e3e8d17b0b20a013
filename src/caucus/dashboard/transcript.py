"""The transcript file: an append-only JSONL record of every routed message.

It is fed from the database, not from memory: after each routed message (and every second) the
writer appends whatever storage holds beyond the last line it wrote. A slow or failing disk only
delays the file, never drops a record, and never slows a sender; a hub killed mid-way catches up
on its next start. A torn last line (a crash in the middle of a write) is removed, reported in
the log and in the file, and its record is written again from the database. Each line is the
wire model of a routed message (`RoutedMessage`), as the console and exports show it.

The composition root (`caucus.server.open_hub`) attaches it to the hub when a transcript file
is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from caucus.clock import Clock
from caucus.domain.events import Event, MessageRouted
from caucus.files import open_private, private_dir, tighten
from caucus.services.history import History
from caucus.services.notifier import Notifier
from caucus.wire.messages import RoutedMessage

log = logging.getLogger(__name__)

BATCH = 500
TAIL_BYTES = 1 << 20  # enough for several of the largest records
IDLE_CHECK = 1.0


def _line(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class TranscriptWriter:
    def __init__(
        self,
        history: History,
        notifier: Notifier,
        clock: Clock,
        path: Path,
        *,
        max_bytes: int = 0,
        keep: int = 5,
    ) -> None:
        self._history = history
        self._notifier = notifier
        self._clock = clock
        self.path = path
        self._max_bytes = max_bytes
        self._keep = keep
        self.last_seq = 0
        self._wake = asyncio.Event()
        self._writing = asyncio.Lock()  # one catch-up at a time, or lines would repeat
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self.repairs = 0  # torn lines found at start

    async def start(self) -> None:
        private_dir(self.path.parent)
        tighten(self.path)  # an older hub made it world-readable
        found = await asyncio.to_thread(self._recover)
        if found is None:
            self.last_seq = await self._history.last_seq()
            await asyncio.to_thread(self._append, [_line(self._header())])
        else:
            self.last_seq = found
        self._unsubscribe = self._notifier.subscribe(self._on_event)
        self._task = asyncio.create_task(self._run(), name="caucus-transcript")

    async def stop(self) -> None:
        """Write whatever was routed before the stop, then end. The writer is never cancelled
        in the middle of a write: a thread cannot be, and its place would be lost."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            await self._task
            self._task = None

    def _on_event(self, event: Event) -> None:
        if isinstance(event, MessageRouted):
            self._wake.set()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), IDLE_CHECK)
            self._wake.clear()
            try:
                await self.catch_up()
            except OSError as exc:  # the disk is full or gone: keep the place and retry
                log.error("cannot write the transcript %s (%s); retrying", self.path, exc)
                if self._stopping:
                    return
                await asyncio.sleep(IDLE_CHECK)
            except Exception:
                log.exception("the transcript writer failed; retrying")
                if self._stopping:
                    return
                await asyncio.sleep(IDLE_CHECK)
            # A stop that came while this round was reading may have followed messages the
            # round missed: it set the wake, so one more round writes them.
            if self._stopping and not self._wake.is_set():
                return

    async def catch_up(self) -> int:
        """Append every message stored beyond the last one written; returns how many."""
        written = 0
        async with self._writing:
            while True:
                page = await self._history.after(self.last_seq, BATCH)
                if not page:
                    return written
                lines = [_line(RoutedMessage.of(m).model_dump(mode="json")) for m in page]
                await asyncio.to_thread(self._append, lines)
                self.last_seq = page[-1].seq
                written += len(page)

    def _header(self, **extra: Any) -> dict[str, Any]:
        return {"type": "start", "ts": self._clock.now(), "from_seq": self.last_seq, **extra}

    # --- file work (in a thread) ------------------------------------------------------------
    def _append(self, lines: list[bytes]) -> None:
        if self._max_bytes and self.path.exists() and self.path.stat().st_size >= self._max_bytes:
            self._rotate()
        with open_private(self.path) as handle:
            handle.write(b"".join(lines))
            handle.flush()

    def _rotate(self) -> None:
        oldest = self.path.with_name(f"{self.path.name}.{self._keep}")
        oldest.unlink(missing_ok=True)
        for n in range(self._keep - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{n}")
            if older.exists():
                older.rename(self.path.with_name(f"{self.path.name}.{n + 1}"))
        self.path.rename(self.path.with_name(f"{self.path.name}.1"))
        self.path.write_bytes(_line(self._header(rotated=True)))

    def _recover(self) -> int | None:
        """The seq of the last record in the file, after removing a torn last line; None for a
        new or empty file."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return None
        with open(self.path, "rb+") as handle:
            size = handle.seek(0, 2)
            start = max(0, size - TAIL_BYTES)
            handle.seek(start)
            tail = handle.read()
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                keep = start + cut + 1 if cut >= 0 else start
                if cut < 0 and start > 0:
                    keep = self._last_newline(handle, start)
                torn = size - keep
                handle.truncate(keep)
                handle.seek(keep)
                tail = tail[: cut + 1] if cut >= 0 else b""
                self.repairs += 1
                log.warning(
                    "transcript %s ended in an incomplete line (%d bytes, from a crash); "
                    "removed it, and its record is written again from the database",
                    self.path,
                    torn,
                )
                note = {
                    "type": "repair",
                    "ts": self._clock.now(),
                    "torn_bytes": torn,
                    "detail": "an incomplete last line was removed; the records after the "
                    "last complete one are written again from the database",
                }
                handle.write(_line(note))
        last = _last_seq(tail)
        if last is None and start > 0:
            last = _last_seq(self.path.read_bytes())
        if last is not None:
            return last
        header = _first_header(self.path)
        return int(header.get("from_seq", 0)) if header else 0

    @staticmethod
    def _last_newline(handle: Any, before: int) -> int:
        step = TAIL_BYTES
        pos = before
        while pos > 0:
            pos = max(0, pos - step)
            handle.seek(pos)
            chunk = handle.read(before - pos)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                return int(pos + cut + 1)
        return 0


def _last_seq(data: bytes) -> int | None:
    for raw in reversed(data.split(b"\n")):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            continue  # a partial first line of the tail window, or a damaged line
        if isinstance(value, dict) and isinstance(value.get("seq"), int):
            return int(value["seq"])
        if isinstance(value, dict) and value.get("type") == "start":
            return int(value.get("from_seq", 0))
    return None


def _first_header(path: Path) -> dict[str, Any] | None:
    with open(path, "rb") as handle:
        first = handle.readline()
    try:
        value = json.loads(first)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
