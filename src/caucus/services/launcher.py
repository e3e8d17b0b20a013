"""Native agents the operator starts from the console: `caucus agent` processes this hub runs.

Only on a hub that binds loopback (its operator token is the only key to it): a launched agent
runs as the hub's user, so the console must not become a way in from another machine. No shell
ever sees the request: the agent's arguments are a list, its tools' command lines are split
into arguments by the agent. The environment is an allowlist (never the hub's own secrets);
each agent runs in its own process group (a stop reaches the tools it started too) and its
output is kept in a bounded ring. The room's events say whether it joined and whether it has
ever spoken: one that joined and never said a word is flagged.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import signal
import sys
import tempfile
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from caucus.clock import Clock
from caucus.config import Settings, exposed
from caucus.domain.events import Event, MessageRouted, PeerJoined
from caucus.domain.launches import Backend, Launched, LaunchState, Output, OutputLine, Stream
from caucus.domain.names import check_peer_name
from caucus.errors import Conflict, InvalidRequest, LauncherDisabled, NotFound
from caucus.files import private_dir
from caucus.services.notifier import Notifier

log = logging.getLogger(__name__)

# What a launched agent inherits from the hub's environment: enough to find programs, a home,
# a locale and a Python; never a CAUCUS_* setting or a credential the request did not name.
ENV_ALLOWLIST = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)
OUTPUT_LINES = 500  # per agent, the last ones
LINE_CHARS = 2000  # a longer line is cut (a model can print anything)
RUNNING_MAX = 16  # launched agents alive at once
STOP_GRACE = 5.0  # seconds between SIGTERM (a graceful stop) and SIGKILL
KEPT_ENDED = 50  # ended agents still listed (with their output)


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    name: str
    backend: Backend
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    prompt: str | None = None
    tools: list[str] = field(default_factory=list)
    approve: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    description: str | None = None
    workdir: str | None = None
    spawned_by: str | None = None  # the agent that asked for it (issue 34), if not the operator


@dataclass(eq=False)
class _Agent:
    launch_id: str
    spec: LaunchSpec
    workdir: str
    process: asyncio.subprocess.Process
    started_at: float
    lines: deque[OutputLine] = field(default_factory=lambda: deque(maxlen=OUTPUT_LINES))
    printed: int = 0
    ended_at: float | None = None
    stopping: bool = False
    joined: bool = False
    spoke: bool = False
    readers: list[asyncio.Task[None]] = field(default_factory=list)
    waiter: asyncio.Task[None] | None = None
    prompt_file: Path | None = None

    def info(self) -> Launched:
        code = self.process.returncode if self.ended_at is not None else None
        state: LaunchState = (
            "exited" if self.ended_at is not None else "stopping" if self.stopping else "running"
        )
        return Launched(
            launch_id=self.launch_id,
            name=self.spec.name,
            backend=self.spec.backend,
            model=self.spec.model,
            workdir=self.workdir,
            pid=self.process.pid,
            state=state,
            exit_code=code,
            started_at=self.started_at,
            ended_at=self.ended_at,
            joined=self.joined,
            spoke=self.spoke,
            lines=len(self.lines),
            spawned_by=self.spec.spawned_by,
        )


class Launcher:
    def __init__(self, settings: Settings, notifier: Notifier, clock: Clock) -> None:
        self._settings = settings
        self._clock = clock
        self._agents: dict[str, _Agent] = {}  # by launch id, in launch order
        self._running: dict[str, _Agent] = {}  # by name: the room's events look them up
        self._ids = itertools.count(1)
        self._ended: list[Callable[[Launched], Awaitable[None]]] = []
        self.closed = False  # the hub is shutting down: every agent ends with it
        notifier.subscribe(self._on_event)

    def on_end(self, callback: Callable[[Launched], Awaitable[None]]) -> None:
        """Call `callback` with each agent once its process has ended."""
        self._ended.append(callback)

    # --- policy ---------------------------------------------------------------------------------
    def why_not(self) -> str | None:
        """Why this hub launches no agents (None: it does)."""
        if exposed(self._settings.host):
            return (
                f"the hub binds {self._settings.host}, reachable from other machines: start it "
                "on 127.0.0.1 to launch agents from the console"
            )
        return None

    def check_enabled(self) -> None:
        why = self.why_not()
        if why is not None:
            raise LauncherDisabled(f"launching agents is off: {why}")

    # --- launching ------------------------------------------------------------------------------
    async def launch(self, spec: LaunchSpec, hub_url: str) -> Launched:
        self.check_enabled()
        check_peer_name(spec.name)
        if spec.backend == "openai" and not spec.model:
            raise InvalidRequest(
                "an openai agent needs model: the model's name on the server", field="model"
            )
        if spec.name in self._running:
            raise Conflict(f"a launched agent named {spec.name!r} is running: stop it first")
        if len(self._running) >= RUNNING_MAX:
            raise Conflict(f"{RUNNING_MAX} launched agents are running: stop one first")
        workdir = self._workdir(spec.workdir)
        launch_id = f"agent-{next(self._ids)}"
        prompt_file = self._prompt_file(spec.prompt) if spec.prompt else None
        argv = _arguments(spec, hub_url, prompt_file)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=workdir,
                env=self._environment(spec),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group: a stop reaches its tools too
            )
        except OSError as exc:
            if prompt_file is not None:
                prompt_file.unlink(missing_ok=True)
            raise InvalidRequest(
                f"the agent could not be started: {exc}", field="backend"
            ) from None
        agent = _Agent(launch_id, spec, workdir, process, self._clock.now())
        agent.prompt_file = prompt_file
        assert process.stdout is not None
        assert process.stderr is not None
        agent.readers = [
            asyncio.create_task(self._read(agent, process.stdout, "stdout")),
            asyncio.create_task(self._read(agent, process.stderr, "stderr")),
        ]
        agent.waiter = asyncio.create_task(self._wait(agent))
        self._agents[launch_id] = agent
        self._running[spec.name] = agent
        self._forget_old()
        return agent.info()

    def _forget_old(self) -> None:
        """Keep the record of the last KEPT_ENDED agents that have ended, not every one ever."""
        ended = [k for k, a in self._agents.items() if a.ended_at is not None]
        for launch_id in ended[: max(0, len(ended) - KEPT_ENDED)]:
            del self._agents[launch_id]

    def _workdir(self, wanted: str | None) -> str:
        if wanted is None:
            return str(Path.cwd())
        path = Path(wanted).expanduser()
        if not path.is_absolute():
            raise InvalidRequest(
                f"workdir must be an absolute path, not {wanted!r}", field="workdir"
            )
        if not path.is_dir():
            raise InvalidRequest(
                f"workdir {wanted!r} is not an existing directory", field="workdir"
            )
        return str(path)

    def _prompt_file(self, text: str) -> Path:
        folder = self._settings.data_dir() / "agents"
        private_dir(folder)
        fd, name = tempfile.mkstemp(prefix="prompt-", suffix=".md", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as out:  # mkstemp makes it 0600
            out.write(text)
        return Path(name)

    def _environment(self, spec: LaunchSpec) -> dict[str, str]:
        env = {k: v for k in ENV_ALLOWLIST if (v := os.environ.get(k)) is not None}
        if spec.api_key_env and spec.api_key_env in os.environ:
            env[spec.api_key_env] = os.environ[spec.api_key_env]
        # Its identity (the token it resumes with) is kept beside the hub's own files.
        env["CAUCUS_HOME"] = str(self._settings.data_dir() / "agents")
        if self._settings.agent_key:  # a hub that asks agents for its key gives it to its own
            env["CAUCUS_AGENT_KEY"] = self._settings.agent_key
        env["PYTHONUNBUFFERED"] = "1"
        return env

    async def _read(self, agent: _Agent, stream: asyncio.StreamReader, name: Stream) -> None:
        while True:
            try:
                raw = await stream.readline()
            except ValueError:  # a line past the reader's limit (it is dropped, not kept)
                raw = b"(a line longer than 64 KiB was left out)\n"
            if not raw:
                return
            agent.printed += 1
            text = raw.decode("utf-8", "replace").rstrip("\n")
            if len(text) > LINE_CHARS:
                text = text[:LINE_CHARS] + "…"
            line = OutputLine(n=agent.printed, ts=self._clock.now(), stream=name, text=text)
            agent.lines.append(line)

    async def _wait(self, agent: _Agent) -> None:
        await agent.process.wait()
        with contextlib.suppress(Exception):
            await asyncio.gather(*agent.readers)
        agent.ended_at = self._clock.now()
        if self._running.get(agent.spec.name) is agent:
            del self._running[agent.spec.name]
        if agent.prompt_file is not None:
            agent.prompt_file.unlink(missing_ok=True)
        for callback in self._ended:
            try:
                await callback(agent.info())
            except Exception:  # one listener's failure must not leave the others untold
                log.exception("a launched agent's end was not recorded")

    # --- what the room says ---------------------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        # On every routed message: one dict lookup, nothing when no agent was launched.
        if not self._running:
            return
        if isinstance(event, MessageRouted):
            agent = self._running.get(event.message.sender)
            if agent is not None:
                agent.spoke = True
        elif isinstance(event, PeerJoined):
            agent = self._running.get(event.name)
            if agent is not None:
                agent.joined = True

    # --- reading and stopping -------------------------------------------------------------------
    def listing(self) -> list[Launched]:
        return [a.info() for a in reversed(self._agents.values())]

    def get(self, launch_id: str) -> Launched:
        return self._agent(launch_id).info()

    def output(self, launch_id: str, after: int = 0) -> Output:
        agent = self._agent(launch_id)
        kept = list(agent.lines)
        dropped = agent.printed - len(kept)
        return Output(
            launch_id=launch_id, lines=[line for line in kept if line.n > after], dropped=dropped
        )

    def _agent(self, launch_id: str) -> _Agent:
        agent = self._agents.get(launch_id)
        if agent is None:
            raise NotFound(f"no launched agent {launch_id!r}")
        return agent

    async def stop(self, launch_id: str) -> Launched:
        """End the agent: SIGTERM to its process group (it leaves the room gracefully), then
        SIGKILL after a grace period. Returns once it has ended."""
        agent = self._agent(launch_id)
        await self._end(agent)
        return agent.info()

    async def _end(self, agent: _Agent) -> None:
        if agent.ended_at is not None or agent.waiter is None:
            return
        agent.stopping = True
        _signal_group(agent.process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(agent.waiter), STOP_GRACE)
        except TimeoutError:
            _signal_group(agent.process.pid, signal.SIGKILL)
            await agent.waiter

    async def close(self) -> None:
        """Stop every agent still running (the hub is shutting down)."""
        self.closed = True
        await asyncio.gather(*(self._end(a) for a in self._agents.values()))


def _arguments(spec: LaunchSpec, hub_url: str, prompt: Path | None) -> list[str]:
    argv = [sys.executable, "-m", "caucus", "agent", "--hub", hub_url, "--name", spec.name]
    argv += ["--backend", spec.backend, "--no-stdin"]
    if spec.model:
        argv += ["--model", spec.model]
    if spec.base_url:
        argv += ["--base-url", spec.base_url]
    if spec.api_key_env:
        argv += ["--api-key-env", spec.api_key_env]
    if prompt is not None:
        argv += ["--prompt", str(prompt)]
    for command in spec.tools:
        argv += ["--mcp-stdio", command]
    for tool in spec.approve:
        argv += ["--approve", tool]
    for tool in spec.allow:
        argv += ["--allow", tool]
    if spec.skills:
        argv += ["--skills", ",".join(spec.skills)]
    if spec.description:
        argv += ["--description", spec.description]
    return argv


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
