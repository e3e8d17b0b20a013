"""Teammates on demand (issue 34): spawn grants, spawned teammates, and what may be spawned."""

from __future__ import annotations

from pydantic import Field

from caucus.domain.launches import Backend
from caucus.domain.spawns import EndedBy, Profile, Spawn, SpawnGrant, SpawnState, Standing
from caucus.wire.fields import Wire


class SpawnGrantInfo(Wire):
    """The operator's leave for one agent to spawn teammates."""

    peer: str
    teammates: int = Field(description="how many it may have running at once")
    given_at: float

    @classmethod
    def of(cls, g: SpawnGrant) -> SpawnGrantInfo:
        return cls.model_construct(peer=g.peer, teammates=g.teammates, given_at=g.given_at)


class ProfileInfo(Wire):
    """A model profile on the operator's list (its server and key stay the hub's)."""

    name: str
    backend: Backend
    model: str | None
    description: str

    @classmethod
    def of(cls, p: Profile) -> ProfileInfo:
        return cls.model_construct(
            name=p.name, backend=p.backend, model=p.model, description=p.description
        )


class TeammateInfo(Wire):
    """One spawned teammate: what it was given and where it stands."""

    spawn_id: str
    name: str = Field(description="its name in the room")
    spawner: str
    profile: str
    tools: list[str]
    prompt: str
    state: SpawnState
    ended_by: EndedBy | None = Field(
        description="exited (by itself), spawner, operator, spawner-left, hub-stopped, failed"
    )
    exit_code: int | None
    started_at: float
    ended_at: float | None
    launch_id: str | None = Field(description="its process in the console's launched agents")
    record: str | None = Field(description="the hash of its spawn record on the ledger")

    @classmethod
    def of(cls, s: Spawn) -> TeammateInfo:
        return cls.model_construct(
            spawn_id=s.id,
            name=s.name,
            spawner=s.spawner,
            profile=s.profile,
            tools=list(s.tools),
            prompt=s.prompt,
            state=s.state,
            ended_by=s.ended_by,
            exit_code=s.exit_code,
            started_at=s.started_at,
            ended_at=s.ended_at,
            launch_id=s.launch_id,
            record=s.record,
        )


class Teammates(Wire):
    """What an agent may spawn now, and its teammates (newest first)."""

    granted: bool = Field(description="the operator has given you the spawn grant")
    allowed: int = Field(description="teammates your grant lets you have running at once")
    running: int = Field(description="your teammates running now")
    room_running: int
    room_max: int = Field(description="spawned teammates the room lets run at once")
    profiles: list[ProfileInfo] = Field(description="the model profiles you may choose")
    tools: list[str] = Field(description="the tools you may give a teammate")
    why_not: str | None = Field(None, description="when this hub launches no agents: why")
    teammates: list[TeammateInfo]

    @classmethod
    def of(cls, s: Standing) -> Teammates:
        return cls.model_construct(
            granted=s.grant is not None,
            allowed=s.grant.teammates if s.grant is not None else 0,
            running=s.running,
            room_running=s.room_running,
            room_max=s.room_max,
            profiles=[ProfileInfo.of(p) for p in s.profiles],
            tools=s.tools,
            why_not=s.why_not,
            teammates=[TeammateInfo.of(t) for t in s.teammates],
        )


class TeammatesOverview(Wire):
    """The room's spawn grants and teammates (the operator's view)."""

    grants: list[SpawnGrantInfo]
    room_running: int
    room_max: int
    profiles: list[ProfileInfo]
    tools: list[str]
    why_not: str | None = None
    teammates: list[TeammateInfo]

    @classmethod
    def of(cls, s: Standing) -> TeammatesOverview:
        return cls.model_construct(
            grants=[SpawnGrantInfo.of(g) for g in s.grants],
            room_running=s.room_running,
            room_max=s.room_max,
            profiles=[ProfileInfo.of(p) for p in s.profiles],
            tools=s.tools,
            why_not=s.why_not,
            teammates=[TeammateInfo.of(t) for t in s.teammates],
        )
