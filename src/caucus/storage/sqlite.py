"""The embedded SQLite store: WAL, one group-committing writer, one reader thread.

Each method is one operation: a function of a connection, run by `sqlite_runners` (ADR 0001).
The operations live in one module per noun; this one opens and closes the file.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import IO

from caucus.errors import StorageError
from caucus.files import make_private, open_private, try_lock
from caucus.storage.migrate import migrate_sqlite
from caucus.storage.sqlite_channels import ChannelOps
from caucus.storage.sqlite_forms import FormOps
from caucus.storage.sqlite_peers import PeerOps
from caucus.storage.sqlite_retention import RetentionOps
from caucus.storage.sqlite_runners import GroupCommitWriter, ReaderThread


class SqliteStore(PeerOps, FormOps, ChannelOps, RetentionOps):
    """`Store` on one SQLite file. Only one hub process may open a file at a time."""

    def __init__(self, path: Path, *, synchronous: str = "FULL", batch_max: int = 512) -> None:
        self.path = path
        self._synchronous = synchronous
        self._lease = 0
        self._lock_file: IO[str] | None = None
        self._recipients: dict[str, tuple[int, str, str]] = {}
        self._writer = GroupCommitWriter(
            self._connect_writer, batch_max=batch_max, on_abort=self._recipients.clear
        )
        self._reader = ReaderThread(self._connect_reader)

    # --- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        # The database and its lock are 0600 in a 0700 folder; SQLite gives its -wal and -shm
        # files the database's mode.
        if not self.path.parent.exists():
            make_private(self.path.parent, directory=True)
        make_private(self.path)
        self._take_lock()
        try:
            await self._writer.open()
            await self._reader.open()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        await self._reader.close()
        await self._writer.close()
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    @property
    def stats(self) -> dict[str, int]:
        return {"write_batches": self._writer.batches, "write_ops": self._writer.ops}

    def _take_lock(self) -> None:
        lock_path = self.path.with_name(self.path.name + ".lock")
        handle = open_private(lock_path, "a+")  # held until close()
        if not try_lock(handle):  # without advisory locks, SQLite still guards the file
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise StorageError(
                f"{self.path} is in use by another hub (pid {holder}); stop it or use --db "
                "to choose another file"
            )
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock_file = handle

    def _connect_writer(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        if conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0:
            # A new file: free pages can then be given back a few at a time (retention), which
            # an older file needs one full VACUUM for (`caucus db purge` does it).
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={self._synchronous}")
        conn.execute("PRAGMA busy_timeout=5000")
        migrate_sqlite(conn)
        self._lease = conn.execute("SELECT COALESCE(MAX(lease), 0) FROM deliveries").fetchone()[0]
        return conn

    def _connect_reader(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=5000")
        conn.execute("PRAGMA query_only=ON")
        return conn
