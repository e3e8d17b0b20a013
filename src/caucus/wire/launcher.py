"""Native agents the operator launched from the console, and what each one printed."""

from __future__ import annotations

from pydantic import BaseModel, Field

from caucus.domain.launches import Backend, Launched, LaunchState, Output, Stream
from caucus.domain.launches import OutputLine as Line

__all__ = ["AgentOutput", "Backend", "LaunchedAgent", "LaunchedList", "OutputLine", "Stream"]


class LaunchedAgent(BaseModel):
    """One launched agent: its process and what the room has seen of it."""

    launch_id: str
    name: str
    backend: Backend
    model: str | None
    workdir: str
    pid: int | None
    state: LaunchState
    exit_code: int | None = Field(description="the process's exit status once it has ended")
    started_at: float
    ended_at: float | None
    joined: bool = Field(description="it joined the room")
    spoke: bool = Field(description="it has sent the room a message")
    silent: bool = Field(description="it joined but has never spoken: worth a look")
    lines: int = Field(description="output lines kept (the last ones)")
    spawned_by: str | None = Field(
        None, description="the agent that spawned it as a teammate; null: the operator"
    )

    @classmethod
    def of(cls, a: Launched) -> LaunchedAgent:
        return cls(
            launch_id=a.launch_id,
            name=a.name,
            backend=a.backend,
            model=a.model,
            workdir=a.workdir,
            pid=a.pid,
            state=a.state,
            exit_code=a.exit_code,
            started_at=a.started_at,
            ended_at=a.ended_at,
            joined=a.joined,
            spoke=a.spoke,
            silent=a.silent,
            lines=a.lines,
            spawned_by=a.spawned_by,
        )


class LaunchedList(BaseModel):
    enabled: bool = Field(description="whether this hub launches agents at all")
    why_not: str | None = Field(None, description="when not enabled: why, and what to change")
    agents: list[LaunchedAgent]


class OutputLine(BaseModel):
    n: int = Field(description="the line's number in the agent's output, from 1")
    ts: float
    stream: Stream
    text: str

    @classmethod
    def of(cls, line: Line) -> OutputLine:
        return cls(n=line.n, ts=line.ts, stream=line.stream, text=line.text)


class AgentOutput(BaseModel):
    launch_id: str
    lines: list[OutputLine]
    dropped: int = Field(description="earlier lines no longer kept (the ring is bounded)")

    @classmethod
    def of(cls, out: Output) -> AgentOutput:
        return cls(
            launch_id=out.launch_id,
            lines=[OutputLine.of(line) for line in out.lines],
            dropped=out.dropped,
        )
