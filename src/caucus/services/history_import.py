"""Carrying a room's history into this one (`caucus db import`): the messages of a transcript
export, appended in bulk as archived history, then the search index caught up.

Archived means delivered already, in the room they came from: no inbox holds them, and no
identity travels with them (names are not identities: a sender or recipient here with the
same name is not the one who wrote them), so an agent reads the imported broadcasts and the
history of the channels it is a member of, and only the operator reads imported directs. A
message already here (by id) is skipped: an import interrupted and run again picks up where it
stopped. Each batch is one short write, so a hub on the same PostgreSQL database keeps serving.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from caucus.domain.messages import Message, SystemSender
from caucus.domain.names import check_peer_name, parse_target
from caucus.errors import InvalidRequest
from caucus.services.history import COUNT_SLICE, count_slice
from caucus.storage.engine import Engine

BATCH = 2_000  # messages per write: a few milliseconds of the writer each
INDEX_BATCH = 5_000  # messages the search index takes per write while catching up

Progress = Callable[[str, int], None]


@dataclass(frozen=True, slots=True)
class ImportReport:
    read: int  # messages in the file
    added: int  # appended here
    indexed: int  # taken into the search index after (SQLite; PostgreSQL indexes as it stores)

    @property
    def skipped(self) -> int:
        """Already here, by id."""
        return self.read - self.added


def archived_row(m: Message, max_content: int) -> dict[str, Any]:
    """A message as `message_import` stores it; an InvalidRequest naming the field when the
    file holds what this room would not have accepted."""
    if m.sender not in SystemSender.__members__.values():
        check_peer_name(m.sender)
    to = parse_target(m.to).name
    if len(m.content) > max_content:
        raise InvalidRequest(f"content is over {max_content} characters", field="content")
    for name in m.delivered_to or []:
        check_peer_name(name)
    return {
        "id": m.id,
        "ts": m.ts,
        "sender": m.sender,
        "target": to,
        "kind": str(m.kind),
        "content": m.content,
        "meta": json.dumps(m.meta) if m.meta is not None else None,
        "thread": m.thread,
        "reply_to": m.reply_to,
        "reply_sender": m.reply_sender,
        "delivered_to": json.dumps(m.delivered_to or [], separators=(",", ":")),
    }


class HistoryImport:
    def __init__(self, db: Engine, max_content: int) -> None:
        self._db = db
        self._max_content = max_content

    async def load(self, rows: Iterable[dict[str, Any]], progress: Progress) -> ImportReport:
        """Append `rows` (`archived_row`s) a batch per write, then catch the search index up;
        `progress(stage, count)` after each batch."""
        read = added = 0
        batch: list[dict[str, Any]] = []
        source = iter(rows)
        while True:
            try:
                row = next(source, None)
            except Exception:  # a bad line: what came before it is stored, a rerun skips it
                if batch:
                    await self._append(batch)
                    progress("stored", read + len(batch))
                raise
            if row is not None:
                batch.append(row)
            if batch and (row is None or len(batch) == BATCH):
                added += await self._append(batch)
                read += len(batch)
                batch = []
                progress("stored", read)
            if row is None:
                break
        indexed = 0
        while done := await self._db.index(lambda r: r.search.index_more(INDEX_BATCH)):
            indexed += done
            progress("indexed", indexed)
        if read:
            progress("optimizing the search index of", read)
            await self._db.index(lambda r: r.search.optimize())
            progress("settling the database after", read)
            await self._db.settle()
        while await self._db.write(lambda r: count_slice(r, COUNT_SLICE)):
            pass  # the sent counts walk past what came in (nobody here sent it)
        return ImportReport(read, added, indexed)

    async def _append(self, batch: list[dict[str, Any]]) -> int:
        return await self._db.write(lambda r: r.messages.import_archived(batch))
