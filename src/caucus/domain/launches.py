"""Native agents the operator launched from the console: what the room knows of each one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Backend = Literal["mock", "openai", "claude-cli"]
Stream = Literal["stdout", "stderr"]
LaunchState = Literal["running", "stopping", "exited"]


@dataclass(frozen=True, slots=True)
class Launched:
    """One launched agent: its process and whether it joined the room and ever spoke."""

    launch_id: str
    name: str
    backend: Backend
    model: str | None
    workdir: str
    pid: int | None
    state: LaunchState
    exit_code: int | None
    started_at: float
    ended_at: float | None
    joined: bool
    spoke: bool
    lines: int
    spawned_by: str | None = None  # the agent that spawned it (issue 34); None: the operator

    @property
    def silent(self) -> bool:
        """Joined but never said a word: worth a look."""
        return self.joined and not self.spoke


@dataclass(frozen=True, slots=True)
class OutputLine:
    n: int  # from 1, over everything the agent printed
    ts: float
    stream: Stream
    text: str


@dataclass(frozen=True, slots=True)
class Output:
    launch_id: str
    lines: list[OutputLine]
    dropped: int  # earlier lines no longer kept (the ring is bounded)
