"""What a tool call's arguments name on disk, and what each held: the files an approval binds.

Every argument value that names a path is bound, wherever it sits (nested objects, lists) and
whatever its key: a string that names something existing, any value of a key such as `path` or
`file`, and one that looks like a path (a slash, a leading `.` or `~`, a file name with an
extension; no spaces) even while nothing is there — a file created between the approval and the
call changes the binding as surely as one edited or deleted. A file is bound by its content's
SHA-256; a directory by its recursive listing (each entry's name, kind, size and modification
time, and each file's content hash within a budget), so a file added, removed or changed
anywhere under it changes the binding too.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

MAX_PATH = 4096
MAX_DEPTH = 8  # how deep into nested arguments paths are looked for
MAX_ENTRIES = 10_000  # directory entries listed per bound directory
CONTENT_BUDGET = 64 * 1024 * 1024  # bytes of file content hashed per directory; then metadata
PATH_KEYS = frozenset({"path", "paths", "file", "files", "file_path", "filename", "target"})
_LOOKS_LIKE_FILE = re.compile(r"^[\w.\-]{1,255}\.[A-Za-z][A-Za-z0-9]{0,9}$")
_CHUNK = 1024 * 1024


def _strings(value: Any, key: str | None, depth: int = 0) -> Iterator[tuple[str | None, str]]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(v, str(k), depth + 1)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v, key, depth + 1)


def _candidate(key: str | None, text: str) -> bool:
    if not text or len(text) > MAX_PATH or "\n" in text or "\0" in text or text != text.strip():
        return False
    if "://" in text:  # a URL, not a path
        return False
    if key is not None and key.lower() in PATH_KEYS:
        return True
    # Words with a slash ("and/or") are not bound while absent; an existing path always is.
    spaced = any(c.isspace() for c in text)
    return not spaced and (
        "/" in text or text.startswith(("~", ".")) or _LOOKS_LIKE_FILE.fullmatch(text) is not None
    )


def _where(text: str, cwd: Path) -> Path:
    path = Path(os.path.expanduser(text))
    return path if path.is_absolute() else cwd / path


def bind(arguments: Mapping[str, Any], cwd: Path) -> dict[str, str]:
    """{absolute path: what it holds now} for every path the arguments name."""
    bound: dict[str, str] = {}
    for key, text in _strings(arguments, None):
        where = _where(text, cwd)
        looks = _candidate(key, text)
        if not looks:
            try:
                exists = where.exists() or where.is_symlink()
            except (OSError, ValueError):
                continue
            if not exists:
                continue
        bound.setdefault(str(where), state_of(where))
    return dict(sorted(bound.items()))


def state_of(path: Path) -> str:
    """One line saying what `path` holds: `absent`, `file sha256:…`, `dir sha256:… (N
    entries)`, or what else it is; a symlink says where it points first."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "absent"
    except (OSError, ValueError) as exc:
        return f"unreadable ({type(exc).__name__})"
    prefix = ""
    if stat.S_ISLNK(info.st_mode):
        prefix = f"link to {os.readlink(path)}: "
        try:
            info = os.stat(path)
        except OSError:
            return prefix + "absent"
    if stat.S_ISREG(info.st_mode):
        try:
            return prefix + f"file sha256:{_file_digest(path)}"
        except OSError as exc:
            return prefix + f"unreadable file ({type(exc).__name__})"
    if stat.S_ISDIR(info.st_mode):
        return prefix + _dir_state(path)
    return prefix + f"special file (mode {stat.filemode(info.st_mode)})"


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _dir_state(root: Path) -> str:
    digest = hashlib.sha256()
    entries = 0
    budget = CONTENT_BUDGET
    truncated = False
    stack = [root]
    while stack and not truncated:
        here = stack.pop()
        try:
            with os.scandir(here) as listing:
                found = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            digest.update(f"{here}\tunreadable {type(exc).__name__}\n".encode())
            continue
        for entry in found:
            if entries >= MAX_ENTRIES:
                truncated = True
                break
            entries += 1
            line = _entry_line(root, entry, budget)
            if entry.is_file(follow_symlinks=False):
                size = _size(entry)
                budget -= size if size <= budget else 0
            digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    count = f"{entries}+ entries, the first {MAX_ENTRIES} bound" if truncated else f"{entries}"
    plural = "" if truncated else (" entry" if entries == 1 else " entries")
    return f"dir sha256:{digest.hexdigest()} ({count}{plural})"


def _size(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_size
    except OSError:
        return 0


def _entry_line(root: Path, entry: os.DirEntry[str], budget: int) -> str:
    relative = os.path.relpath(entry.path, root)
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:
        return f"{relative}\tunreadable {type(exc).__name__}"
    meta = f"{relative}\t{stat.filemode(info.st_mode)}\t{info.st_size}\t{info.st_mtime_ns}"
    if stat.S_ISLNK(info.st_mode):
        return f"{meta}\t-> {os.readlink(entry.path)}"
    if stat.S_ISREG(info.st_mode) and info.st_size <= budget:
        try:
            return f"{meta}\t{_file_digest(Path(entry.path))}"
        except OSError as exc:
            return f"{meta}\tunreadable {type(exc).__name__}"
    return meta


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """One line per bound path whose state differs."""
    return [
        f"{path}: {before.get(path, 'unbound')} -> {after.get(path, 'unbound')}"
        for path in sorted(set(before) | set(after))
        if before.get(path) != after.get(path)
    ]
