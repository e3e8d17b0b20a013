"""Writing the hub's own small files: secrets created private, state replaced atomically."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any


def create_private(path: Path, data: bytes) -> None:
    """Create `path` with mode 0600 from the first byte on; FileExistsError if it is there."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


PRIVATE = 0o600


def open_private(path: Path, mode: str = "ab") -> IO[Any]:
    """Open `path` for appending (or `mode`), creating it 0600: the hub's files hold the
    room's conversation, and nobody else on the machine reads them."""
    flags = os.O_CREAT | (os.O_RDWR if "+" in mode else os.O_WRONLY)
    if "a" in mode:
        flags |= os.O_APPEND
    return os.fdopen(os.open(path, flags, PRIVATE), mode)


def private_dir(path: Path) -> Path:
    """Create `path` and every missing folder above it 0700 (`mkdir(parents=True)` gives the
    parents the umask's mode, 0755 as a rule)."""
    missing: list[Path] = []
    here = path
    while not here.exists():
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    return path


def make_private(path: Path, *, directory: bool = False) -> None:
    """Create `path` (a file, or with `directory` a folder) private if it is missing, and
    take group and other access away if an older version left it open."""
    if directory:
        private_dir(path)
        wanted = 0o700
    else:
        private_dir(path.parent)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE))
        wanted = PRIVATE
    current = path.stat().st_mode & 0o777
    if current & 0o077:
        path.chmod(current & wanted)


def tighten(path: Path) -> None:
    """Take group and other access away from `path`, if it exists and has any."""
    try:
        current = path.stat().st_mode & 0o777
    except FileNotFoundError:
        return
    if current & 0o077:
        path.chmod(current & 0o700)


def replace_atomically(
    path: Path, data: bytes, *, mode: int = PRIVATE, durable: bool = False
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
