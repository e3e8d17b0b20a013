"""Native agents the operator launched from the console, and what each one printed."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Backend = Literal["mock", "openai", "claude-cli"]
Stream = Literal["stdout", "stderr"]


class LaunchedAgent(BaseModel):
    """One launched agent: its process and what the room has seen of it."""

    launch_id: str
    name: str
    backend: Backend
    model: str | None
    workdir: str
    pid: int | None
    state: Literal["running", "stopping", "exited"]
    exit_code: int | None = Field(description="the process's exit status once it has ended")
    started_at: float
    ended_at: float | None
    joined: bool = Field(description="it joined the room")
    spoke: bool = Field(description="it has sent the room a message")
    silent: bool = Field(description="it joined but has never spoken: worth a look")
    lines: int = Field(description="output lines kept (the last ones)")


class LaunchedList(BaseModel):
    enabled: bool = Field(description="whether this hub launches agents at all")
    why_not: str | None = Field(None, description="when not enabled: why, and what to change")
    agents: list[LaunchedAgent]


class OutputLine(BaseModel):
    n: int = Field(description="the line's number in the agent's output, from 1")
    ts: float
    stream: Stream
    text: str


class AgentOutput(BaseModel):
    launch_id: str
    lines: list[OutputLine]
    dropped: int = Field(description="earlier lines no longer kept (the ring is bounded)")
