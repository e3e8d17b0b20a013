"""Writing the hub's own small files: secrets created private, state replaced atomically."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO


def create_private(path: Path, data: bytes) -> None:
    """Create `path` with mode 0600 from the first byte on; FileExistsError if it is there."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


def replace_atomically(
    path: Path, data: bytes, *, mode: int = 0o644, durable: bool = False
) -> None:
    """Readers see the old content or the new, never a mix. `durable` also survives power loss:
    the new bytes and the rename are fsynced before this returns."""
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(temporary, path)
    if durable:
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def try_lock(handle: IO[str]) -> bool:
    """Take an exclusive advisory lock on an open file without waiting: False if another
    process holds it. The operating system releases it when the holder exits, however it
    exits. Where there are no advisory locks it always succeeds."""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
