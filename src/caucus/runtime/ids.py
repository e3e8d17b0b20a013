"""Identifiers for agents, threads, runs and messages, and the small key-value store that keeps
an agent's identity by name.

Ids come from an injectable source so a test can predict them: `CountingIds` numbers each kind
from 1 (`thread_1`, `run_2`), `RandomIds` draws them for real use.
"""

from __future__ import annotations

import itertools
import secrets
from collections import defaultdict
from collections.abc import Iterator
from typing import Protocol


class Ids(Protocol):
    def new(self, kind: str) -> str:
        """A fresh id for a thing of `kind` ("agent", "thread", "run", "msg")."""
        ...


class CountingIds:
    """Deterministic ids: `<kind>_<n>`, counted per kind from 1."""

    def __init__(self) -> None:
        self._counters: defaultdict[str, Iterator[int]] = defaultdict(lambda: itertools.count(1))

    def new(self, kind: str) -> str:
        return f"{kind}_{next(self._counters[kind])}"


class RandomIds:
    def new(self, kind: str) -> str:
        return f"{kind}_{secrets.token_hex(8)}"


class KVStore(Protocol):
    """Where the runtime keeps what outlives one thread (an agent's id by its name)."""

    async def get(self, key: str) -> str | None: ...

    async def set(self, key: str, value: str) -> None: ...


class MemoryKV:
    def __init__(self) -> None:
        self._data: dict[str, str] = {}

    async def get(self, key: str) -> str | None:
        return self._data.get(key)

    async def set(self, key: str, value: str) -> None:
        self._data[key] = value
