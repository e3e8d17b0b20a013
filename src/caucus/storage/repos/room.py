"""The room's durable settings (mode, send budget, retention bookkeeping), by key."""

from __future__ import annotations

import json
from typing import Any

from caucus.storage.engine import Tx
from caucus.storage.rows import stored_json


class RoomState:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def all(self) -> dict[str, Any]:
        return {r["key"]: stored_json(r["value"]) for r in self._tx.all("room_state_all")}

    def locked(self, key: str, default: Any) -> Any:
        """One key's value, its row locked for the rest of the unit (created with `default`
        first if missing), for a read-modify-write that processes must take turns at."""
        self._tx.run("room_state_insert_missing", {"key": key, "value": json.dumps(default)})
        row = self._tx.one("room_state_for_update", {"key": key})
        return stored_json(row["value"]) if row is not None else default

    def identity(self, fresh: str) -> str:
        """The room's identity, which it keeps for life: the first process to ask stores
        `fresh`, every later one reads what was stored."""
        return str(self.locked("room_id", fresh))

    def get(self, key: str, default: Any) -> Any:
        row = self._tx.one("room_state_get", {"key": key})
        return stored_json(row["value"]) if row is not None else default

    def set(self, key: str, value: Any) -> None:
        self._tx.run("room_state_set", {"key": key, "value": json.dumps(value)})
