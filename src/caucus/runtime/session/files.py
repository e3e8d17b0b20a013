"""A new file under a fresh UUID in a folder, never an existing one."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TextIO


def new_file(
    folder: Path, name: str, ids: Callable[[], str] = lambda: str(uuid.uuid4())
) -> tuple[str, Path, TextIO]:
    """(the UUID, the path, the file opened for writing) for `name` formatted with a fresh
    UUID; the file is created exclusively (mode 0600), so an existing one is never
    overwritten."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    while True:
        key = ids()
        path = folder / name.format(key)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        return key, path, os.fdopen(fd, "w", encoding="utf-8")
