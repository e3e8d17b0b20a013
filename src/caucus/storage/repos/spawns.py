"""Spawn grants and spawned teammates (`domain.spawns`), stored as given and read as they
stand."""

from __future__ import annotations

import json

from caucus.domain.spawns import Spawn, SpawnGrant
from caucus.storage.engine import Row, Tx
from caucus.storage.rows import stored_json


def _grant(row: Row) -> SpawnGrant:
    return SpawnGrant(row["peer"], int(row["teammates"]), row["given_at"])


def _spawn(row: Row) -> Spawn:
    tools = stored_json(row["tools"])
    return Spawn(
        id=row["id"],
        spawner_id=int(row["spawner_id"]),
        spawner=row["spawner"],
        name=row["name"],
        profile=row["profile"],
        tools=tuple(str(t) for t in tools) if isinstance(tools, list) else (),
        prompt=row["prompt"],
        process=row["process"],
        launch_id=row["launch_id"],
        record=row["record"],
        state=row["state"],
        ended_by=row["ended_by"],
        exit_code=row["exit_code"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
    )


class Spawns:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    # --- grants ---------------------------------------------------------------------------
    def grant(self, peer_id: int, peer: str, teammates: int, now: float) -> None:
        self._tx.run(
            "spawn_grant_set",
            {"peer_id": peer_id, "peer": peer, "teammates": teammates, "now": now},
        )

    def revoke(self, peer_id: int) -> bool:
        return self._tx.run("spawn_grant_delete", {"peer_id": peer_id}) > 0

    def grant_of(self, peer_id: int) -> SpawnGrant | None:
        row = self._tx.one("spawn_grant_get", {"peer_id": peer_id})
        return _grant(row) if row is not None else None

    def grants(self) -> list[SpawnGrant]:
        """The grants of agents still here, by name."""
        return [_grant(r) for r in self._tx.all("spawn_grants_here")]

    # --- spawns ---------------------------------------------------------------------------
    def insert(self, s: Spawn) -> None:
        self._tx.run(
            "spawn_insert",
            {
                "id": s.id,
                "spawner_id": s.spawner_id,
                "spawner": s.spawner,
                "name": s.name,
                "profile": s.profile,
                "tools": json.dumps(list(s.tools)),
                "prompt": s.prompt,
                "process": s.process,
                "now": s.started_at,
            },
        )

    def launched(self, spawn_id: str, launch_id: str, record: str | None) -> None:
        self._tx.run("spawn_launched", {"id": spawn_id, "launch_id": launch_id, "record": record})

    def end(self, spawn_id: str, ended_by: str, exit_code: int | None, now: float) -> bool:
        """Mark it ended (False: it already was)."""
        params = {"id": spawn_id, "ended_by": ended_by, "exit_code": exit_code, "now": now}
        return self._tx.run("spawn_end", params) > 0

    def end_running(self, ended_by: str, now: float) -> int:
        return self._tx.run("spawns_end_running", {"ended_by": ended_by, "now": now})

    def get(self, spawn_id: str) -> Spawn | None:
        row = self._tx.one("spawn_get", {"id": spawn_id})
        return _spawn(row) if row is not None else None

    def running(self, spawner_id: int | None = None) -> int:
        """How many run: in the room, or of one spawner."""
        if spawner_id is None:
            row = self._tx.one("spawns_running_count")
        else:
            row = self._tx.one("spawns_running_count_of", {"spawner_id": spawner_id})
        return int(row["n"]) if row is not None else 0

    def running_of(self, spawner: str) -> list[Spawn]:
        return [_spawn(r) for r in self._tx.all("spawns_running_of_spawner", {"spawner": spawner})]

    def recent(self, limit: int, spawner_id: int | None = None) -> list[Spawn]:
        """The newest first: the room's, or one spawner's."""
        if spawner_id is None:
            rows = self._tx.all("spawns_recent", {"limit": limit})
        else:
            rows = self._tx.all("spawns_recent_of", {"spawner_id": spawner_id, "limit": limit})
        return [_spawn(r) for r in rows]

    def forget(self, before: float) -> int:
        return self._tx.run("spawns_forget", {"before": before})
