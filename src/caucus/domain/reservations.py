"""File reservations: advisory leases an agent takes on paths and globs of a repository it
edits beside others, so that two agents do not rewrite one file at once.

A pattern is relative to the repository's root and read with git's wildmatch rules (the
`pathspec` library's `gitignore` patterns, anchored at the root): `src/app.py`, `docs/` (the
folder and all below it, and a file of that name if it is one), `src/**/*.py`, `*.toml` (the
root's). Control characters are refused. An exclusive reservation
conflicts with any other holder's reservation on a pattern that overlaps it; shared ones
conflict only with exclusive ones. Two patterns overlap when they are the same, or when one
matches the other's text read as a path (`src/` and `src/app.py`; `src/*.py` and
`src/app.py`): two globs that only meet in files neither names (`src/a*` and `src/*.py`) are
not told apart here, and the pre-commit guard, which checks the files a commit touches
against every exclusive pattern exactly, is what stops those.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import pathspec

from caucus.errors import InvalidRequest


class ReservationPolicy(StrEnum):
    """What the room does with a conflicting reservation (the operator sets it; the hub's
    `reservations` setting is the default)."""

    ADVISORY = "advisory"  # granted, with the conflicts reported
    ENFORCE = "enforce"  # refused, with the conflicts reported


MAX_PATTERN = 512  # characters of one pattern
MAX_PATTERNS = 50  # patterns in one request
MAX_REASON = 280
TTL_MIN = 60.0
TTL_MAX = 24 * 3600.0  # a longer job renews
TTL_DEFAULT = 3600.0


@dataclass(slots=True)
class Reservation:
    id: str
    holder: str
    pattern: str
    exclusive: bool
    reason: str | None
    created_at: float
    expires_at: float


@dataclass(slots=True)
class ReservationConflict:
    """A pattern asked for that overlaps another holder's reservation."""

    pattern: str  # as asked
    holder: str
    held: str  # the holder's pattern
    exclusive: bool  # the holder's reservation
    expires_at: float


@dataclass(slots=True)
class Reserved:
    """What a reserve request did: the reservations granted (none when the room enforces and
    there were conflicts) and the conflicts found."""

    granted: list[Reservation]
    conflicts: list[ReservationConflict]
    policy: ReservationPolicy


def normalized(pattern: str) -> str:
    """A pattern as stored: relative to the repository's root, `/`-separated, without `./`,
    empty or `..` segments; refused (with what to send instead) otherwise."""
    text = pattern.strip()
    if not text:
        raise InvalidRequest("a path or glob is empty", field="paths")
    if len(text) > MAX_PATTERN:
        raise InvalidRequest(
            f"a path or glob is at most {MAX_PATTERN} characters", field="paths", pattern=text
        )
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise InvalidRequest(
            f"{text!r}: a path or glob holds no control characters (line breaks, tabs, NUL)",
            field="paths",
            pattern=text,
        )
    if "\\" in text:
        raise InvalidRequest(
            f"{text!r}: use '/' between folders (no backslashes)", field="paths", pattern=text
        )
    if text.startswith("!"):
        raise InvalidRequest(
            f"{text!r}: a reservation names what it covers; there is no '!' exception",
            field="paths",
            pattern=text,
        )
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise InvalidRequest(
            f"{text!r}: give a path relative to the repository's root, not an absolute one",
            field="paths",
            pattern=text,
        )
    folder = text.endswith("/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts:
        raise InvalidRequest(f"{text!r} names no path", field="paths", pattern=text)
    if ".." in parts:
        raise InvalidRequest(
            f"{text!r}: '..' leaves the repository; name the path from its root",
            field="paths",
            pattern=text,
        )
    return "/".join(parts) + ("/" if folder else "")


def normalized_all(patterns: Sequence[str]) -> list[str]:
    """Each pattern normalized, duplicates dropped, order kept; at least one, at most
    `MAX_PATTERNS`."""
    if not patterns:
        raise InvalidRequest("name at least one path or glob", field="paths")
    if len(patterns) > MAX_PATTERNS:
        raise InvalidRequest(f"at most {MAX_PATTERNS} paths or globs at once", field="paths")
    return list(dict.fromkeys(normalized(p) for p in patterns))


@functools.lru_cache(maxsize=4096)
def _spec(pattern: str) -> pathspec.PathSpec[Any]:
    return pathspec.PathSpec.from_lines("gitignore", ["/" + pattern])


def covers(pattern: str, path: str) -> bool:
    """Whether a (normalized) pattern covers a file at `path` (relative to the root). A
    folder pattern (`docs/`, `src/app.py/`) covers everything below it and a file of that
    very name too: one name cannot be both, and the reading that protects more is the one an
    agent reserving it meant."""
    path = path.lstrip("/")
    if pattern.endswith("/") and _spec(pattern.rstrip("/")).match_file(path):
        return True
    return _spec(pattern).match_file(path)


def overlaps(a: str, b: str) -> bool:
    """Whether two (normalized) patterns may name one file (see the module docstring)."""
    if a == b:
        return True
    return covers(a, b.rstrip("/")) or covers(b, a.rstrip("/"))


def conflicts(
    patterns: Iterable[str], exclusive: bool, held: Iterable[Reservation], holder: str
) -> list[ReservationConflict]:
    """The other holders' live reservations that the patterns asked for would meet."""
    others = [r for r in held if r.holder != holder]
    found = []
    for pattern in patterns:
        for r in others:
            if (exclusive or r.exclusive) and overlaps(pattern, r.pattern):
                found.append(
                    ReservationConflict(pattern, r.holder, r.pattern, r.exclusive, r.expires_at)
                )
    return found


def blocking(
    paths: Iterable[str], held: Iterable[Reservation], holder: str | None
) -> list[tuple[str, Reservation]]:
    """(path, reservation) for each file of `paths` that another holder's exclusive
    reservation covers (what the pre-commit guard refuses)."""
    exclusive = [r for r in held if r.exclusive and r.holder != holder]
    return [(path, r) for path in paths for r in exclusive if covers(r.pattern, path)]
