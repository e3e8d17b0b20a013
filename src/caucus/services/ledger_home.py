"""Where a PostgreSQL room's ledger lives when nobody said: under the room's own identity.

A PostgreSQL hub given neither a ledger path nor a files directory once kept `decisions.jsonl`
in the user data directory, which every room on every database shared: two rooms appended to
one chain. Now the database holds the room's identity (`room_state.room_id`, created by the
first hub process that asks) and the ledger lives in `rooms/<room id>/`. A room whose records
are in the old shared file takes a copy of it (the chain cannot be split, and another room may
need the same copy), so nothing recorded is lost.
"""

from __future__ import annotations

import logging
import secrets
import shutil
from pathlib import Path

from caucus.config import Settings
from caucus.defaults import user_data_dir
from caucus.files import private_dir
from caucus.ledger.tail import newest_first
from caucus.ledger.verify import head_path
from caucus.storage.engine import Engine

log = logging.getLogger(__name__)


async def room_ledger(settings: Settings, db: Engine) -> Path:
    """The room's ledger path, with an older shared ledger holding its records copied there."""
    room_id = await db.write(lambda r: r.room.identity(secrets.token_hex(8)))
    path = settings.ledger_path(room_id)
    private_dir(path.parent)
    legacy = user_data_dir() / "decisions.jsonl"
    if path.exists() or not legacy.exists():
        return path
    latest = await db.read(lambda r: r.forms.latest_recorded())
    if latest is None:
        return path
    if not any(record.get("hash") == latest for record in newest_first(legacy)):
        log.warning(
            "this room's earlier decisions are not in %s; its ledger starts at %s", legacy, path
        )
        return path
    for source, target in ((legacy, path), (head_path(legacy), head_path(path))):
        if source.exists():
            shutil.copy2(source, target)
            target.chmod(0o600)
    log.warning(
        "copied the shared ledger %s to this room's own, %s: rooms no longer share a chain",
        legacy,
        path,
    )
    return path
