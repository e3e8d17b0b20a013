"""Evidence for a deliberation: a JSON file, commands that print some, and what the room knows.

Every item is normalised to the record's shape: a string `source` and a string `ref`, every
other key kept. A source that breaks (exits non-zero, runs past its timeout, prints something
that is not a JSON list) aborts the deliberation: deciding on part of the evidence while
believing it whole is the failure this refuses.
"""

from __future__ import annotations

import asyncio
import json
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SAFE_INTEGER = 2**53
REF_KEYS = ("ref", "url", "path", "id", "title")


class EvidenceError(Exception):
    """Evidence that cannot be used; the message says which and what to do."""


@dataclass(frozen=True, slots=True)
class Source:
    """A command that prints a JSON list of evidence objects."""

    name: str
    command: str | Sequence[str]
    timeout_seconds: float = 30.0


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in evidence")


def _numbers_ok(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, float):
            if not math.isfinite(v):
                return False
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) > SAFE_INTEGER:
            return False
    return True


def normalise(items: Any, *, source: str, where: str) -> list[dict[str, Any]]:
    """`items` (parsed JSON) as evidence entries; `source` fills a missing `source`."""
    if not isinstance(items, list):
        raise EvidenceError(f"{where} must hold a JSON list of objects, not {_kind(items)}")
    out: list[dict[str, Any]] = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise EvidenceError(f"{where}: item {number} is {_kind(item)}, not an object")
        if not _numbers_ok(item):
            raise EvidenceError(
                f"{where}: item {number} holds a number the ledger cannot record (an integer "
                "beyond ±2^53, or an infinity)"
            )
        entry = dict(item)
        given = entry.get("source")
        entry["source"] = given if isinstance(given, str) and given else source
        ref = next((entry[k] for k in REF_KEYS if entry.get(k) not in (None, "")), None)
        entry["ref"] = str(ref) if ref is not None else f"{entry['source']}#{number}"
        out.append(entry)
    return out


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "a string" if isinstance(value, str) else type(value).__name__


def load_file(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceError(f"cannot read the evidence file {path}: {exc}") from None
    try:
        items = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise EvidenceError(f"the evidence file {path} is not JSON: {exc}") from None
    return normalise(items, source=path.name, where=f"the evidence file {path}")


async def run_source(source: Source, *, cwd: Path | None = None) -> list[dict[str, Any]]:
    argv = shlex.split(source.command) if isinstance(source.command, str) else list(source.command)
    if not argv:
        raise EvidenceError(f"evidence source {source.name!r} has an empty command")
    where = f"evidence source {source.name!r}"
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
        )
    except OSError as exc:
        raise EvidenceError(f"{where} cannot start ({exc}); fix its command") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), source.timeout_seconds)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise EvidenceError(
            f"{where} did not finish within {source.timeout_seconds:g} s; nothing was decided"
        ) from None
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip()[-400:]
        raise EvidenceError(
            f"{where} exited with {proc.returncode}; nothing was decided"
            + (f": {tail}" if tail else "")
        )
    try:
        items = json.loads(out.decode("utf-8"), parse_constant=_reject_constant)
    except ValueError as exc:
        raise EvidenceError(f"{where} did not print JSON ({exc}); nothing was decided") from None
    return normalise(items, source=source.name, where=where)


async def gather(
    file: Path | None, sources: Sequence[Source], extra: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Every item from the file, then each source in order, then `extra` (already normal)."""
    items = load_file(file) if file is not None else []
    for found in await asyncio.gather(*(run_source(s) for s in sources)):
        items.extend(found)
    items.extend(dict(e) for e in extra)
    return items
