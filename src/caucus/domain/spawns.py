"""Teammates on demand (issue 34): an agent the operator granted `spawn` asks the hub to start
a native agent, with a prompt, one of the operator's model profiles and tools from the
operator's list.

The grant is per agent (its identity, not its name: a later agent under the same name does
not inherit it) and bounds how many teammates it may have running at once; the room bounds
them all together. A spawn is a row while it runs and after (the bounds count the running
ones) and a record on the ledger, written before the spawner hears it succeeded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from caucus.domain.launches import Backend
from caucus.domain.names import BROADCAST

SpawnState = Literal["running", "ended"]
# Why a teammate ended: its process exited by itself, or who stopped it.
EndedBy = Literal["exited", "spawner", "operator", "spawner-left", "hub-stopped", "failed"]

PROMPT_MAX = 8_000  # characters: the prompt is on the ledger whole
TOOLS_MAX = 8  # per teammate, from the operator's list
TEAMMATES_MAX = 16  # the most a grant may allow at once
KEPT_ENDED = 50  # ended teammates listed (older ones are forgotten after retention_age)


@dataclass(frozen=True, slots=True)
class SpawnGrant:
    """The operator's leave for one agent to spawn, and how many may run at once."""

    peer: str
    teammates: int
    given_at: float


@dataclass(frozen=True, slots=True)
class Spawn:
    """One teammate an agent spawned: what it was given and where it stands."""

    id: str
    spawner_id: int
    spawner: str
    name: str
    profile: str
    tools: tuple[str, ...]
    prompt: str
    process: str  # the hub process that runs it (several may share a PostgreSQL room)
    launch_id: str | None
    record: str | None  # the ledger record's hash
    state: SpawnState
    ended_by: EndedBy | None
    exit_code: int | None
    started_at: float
    ended_at: float | None


@dataclass(frozen=True, slots=True)
class Profile:
    """A model profile on the operator's list, as agents see it (its server and key stay the
    hub's)."""

    name: str
    backend: Backend
    model: str | None
    description: str


@dataclass(frozen=True, slots=True)
class Standing:
    """What one agent may spawn now (or, `grant` None and `teammates` the room's, what the
    operator sees), and the teammates."""

    grant: SpawnGrant | None
    running: int  # the agent's teammates running
    room_running: int
    room_max: int
    profiles: list[Profile]
    tools: list[str]
    teammates: list[Spawn]
    why_not: str | None  # the hub launches no agents at all, and why
    grants: list[SpawnGrant]  # the operator's view: every grant of an agent still here


def prompt_digest(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()


def spawn_record(spawn: Spawn, profile: dict[str, Any], *, now: float) -> dict[str, Any]:
    """The ledger record of a spawn: the spawner asked, the operator's grant allowed it, the
    hub launched it with exactly this prompt, profile and these tools."""
    tools = ", ".join(spawn.tools) if spawn.tools else "no tools beyond the room's"
    return {
        "schema_version": "0.1",
        "timestamp": datetime.fromtimestamp(now, UTC).isoformat(),
        "subject": f"{spawn.spawner} spawned {spawn.name}",
        "positions": [
            {
                "agent": spawn.spawner,
                "stance": "spawn",
                "summary": f"asked for a teammate {spawn.name} on profile {spawn.profile}",
                "confidence": 1.0,
            }
        ],
        "decision": f"launched {spawn.name} on profile {spawn.profile} with {tools}",
        "dissent": [],
        "confidence": 1.0,
        "evidence": [{"source": "caucus-spawn", "ref": spawn.id}],
        "caucus": {
            "kind": "spawn",
            "spawn_id": spawn.id,
            "audience": BROADCAST,
            "spawner": spawn.spawner,
            "teammate": spawn.name,
            "profile": spawn.profile,
            "model": profile,
            "tools": list(spawn.tools),
            "prompt": spawn.prompt,
            "prompt_sha256": prompt_digest(spawn.prompt),
        },
    }
