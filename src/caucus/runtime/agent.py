"""The agent runtime: the source of truth for agents, threads and their history.

Actions come in (`apply`), events go out (`next_event`). A run snapshots the thread's history
and its length, runs the backend with a sink for the messages it produces, and finishes only
when both the backend's outcome and the end of its message stream are in. Messages added
during a run are kept after the run's own: the history becomes the snapshot, then what the run
produced, then what was added meanwhile, so the newest user message stays last. A message
added (or a run asked for) while a run is under way queues exactly one follow-up run, over the
whole history, however many arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from caucus.models.chat import ChatMessage, Role, user
from caucus.models.seam import AgentBackend, BackendError
from caucus.models.tools import ToolExecutor, ToolObserver
from caucus.runtime.actions import (
    Action,
    AddMessage,
    CheckThread,
    GetOrCreateAgent,
    HoldThread,
    InterruptRun,
    NewThread,
    ResetThread,
    RunThread,
)
from caucus.runtime.events import (
    Event,
    ExistingAgentRetrieved,
    NewAgentCreated,
    NewThreadCreated,
    NewThreadMessage,
    NewThreadRunCreated,
    ThreadChecked,
    ThreadMessageAdded,
    ThreadReset,
    ThreadRunComplete,
    ThreadRunFailed,
    ThreadRunInterrupted,
)
from caucus.runtime.ids import Ids, KVStore

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Agent:
    id: str
    name: str
    instructions: str


@dataclass(slots=True)
class Thread:
    id: str
    agent: Agent
    history: list[ChatMessage] = field(default_factory=list)
    run_id: str | None = None  # the run under way
    queued: bool = False  # another run follows it
    last_status: str = "none"
    last_run_id: str | None = None
    task: asyncio.Task[None] | None = None
    stopping: tuple[str, str | None, bool] | None = None  # run id, reason, reset after


class _End:
    pass


_END = _End()


class _Sink:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[ChatMessage | _End] = asyncio.Queue()

    async def put(self, message: ChatMessage) -> None:
        await self.queue.put(message)


class UnknownThread(LookupError):
    pass


class AgentRuntime:
    def __init__(
        self,
        backend: AgentBackend,
        tools: ToolExecutor,
        *,
        ids: Ids,
        kv: KVStore,
        observer: ToolObserver | None = None,
    ) -> None:
        self._backend = backend
        self._tools = tools
        self._observer = observer
        self._ids = ids
        self._kv = kv
        self._agents: dict[str, Agent] = {}
        self._threads: dict[str, Thread] = {}
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._runs: set[asyncio.Task[None]] = set()

    # --- in and out --------------------------------------------------------------------------
    async def apply(self, action: Action) -> None:
        if isinstance(action, GetOrCreateAgent):
            await self._agent(action)
        elif isinstance(action, NewThread):
            agent = self._agents[action.agent_id]
            thread = Thread(self._ids.new("thread"), agent)
            self._threads[thread.id] = thread
            self._emit(NewThreadCreated(thread.id, agent.id))
        elif isinstance(action, AddMessage):
            thread = self._thread(action.thread_id)
            thread.history.append(action.message)
            if thread.run_id is not None:
                thread.queued = True
            self._emit(
                ThreadMessageAdded(thread.id, self._ids.new("msg"), action.message, thread.run_id)
            )
        elif isinstance(action, RunThread):
            thread = self._thread(action.thread_id)
            if thread.run_id is not None:
                thread.queued = True
            else:
                self._start(thread)
        elif isinstance(action, InterruptRun):
            self._interrupt(self._thread(action.thread_id), action.reason, reset=False)
        elif isinstance(action, ResetThread):
            thread = self._thread(action.thread_id)
            if not self._interrupt(thread, "reset", reset=True):
                self._clear(thread)
        elif isinstance(action, HoldThread):
            self._thread(action.thread_id).queued = False
        elif isinstance(action, CheckThread):
            thread = self._thread(action.thread_id)
            status = "running" if thread.run_id is not None else thread.last_status
            run_id = thread.run_id or thread.last_run_id
            self._emit(ThreadChecked(thread.id, status, run_id, thread.queued))

    async def next_event(self) -> Event:
        return await self._events.get()

    def history(self, thread_id: str) -> list[ChatMessage]:
        return list(self._thread(thread_id).history)

    @property
    def busy(self) -> bool:
        """A run is under way or queued (or its events are not all taken yet)."""
        return any(t.run_id is not None for t in self._threads.values()) or not self._events.empty()

    async def close(self) -> None:
        """Cancel every run still under way, and wait until each has ended."""
        runs, self._runs = list(self._runs), set()
        for task in runs:
            task.cancel()
        for task in runs:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # --- agents --------------------------------------------------------------------------------
    async def _agent(self, action: GetOrCreateAgent) -> None:
        key = f"agent:{action.name}"
        known = await self._kv.get(key)
        if known is not None and known in self._agents:
            agent = self._agents[known]
            agent.instructions = action.instructions
            self._emit(ExistingAgentRetrieved(agent.id, agent.name))
            return
        agent = Agent(known or self._ids.new("agent"), action.name, action.instructions)
        self._agents[agent.id] = agent
        if known is None:
            await self._kv.set(key, agent.id)
            self._emit(NewAgentCreated(agent.id, agent.name))
        else:
            self._emit(ExistingAgentRetrieved(agent.id, agent.name))

    def _clear(self, thread: Thread) -> None:
        dropped = len(thread.history)
        thread.history = []
        thread.queued = False
        self._emit(ThreadReset(thread.id, dropped))

    def _thread(self, thread_id: str) -> Thread:
        try:
            return self._threads[thread_id]
        except KeyError:
            raise UnknownThread(f"no thread {thread_id!r}") from None

    def _emit(self, event: Event) -> None:
        self._events.put_nowait(event)

    # --- runs ----------------------------------------------------------------------------------
    def _start(self, thread: Thread) -> None:
        """The run's history is what the thread holds now: a message added from here on
        comes after the run's answer, and runs next."""
        run_id = self._ids.new("run")
        thread.run_id = run_id
        thread.queued = False
        snapshot = list(thread.history)
        self._emit(NewThreadRunCreated(thread.id, run_id, len(snapshot)))
        task = asyncio.ensure_future(self._run(thread, run_id, snapshot))
        thread.task = task
        self._runs.add(task)
        task.add_done_callback(self._runs.discard)

    async def _run(self, thread: Thread, run_id: str, snapshot: list[ChatMessage]) -> None:
        count = len(snapshot)
        sink = _Sink()
        produced: list[ChatMessage] = []

        async def drain() -> None:
            while not isinstance(message := await sink.queue.get(), _End):
                produced.append(message)
                self._emit(NewThreadMessage(thread.id, run_id, message))

        draining = asyncio.ensure_future(drain())
        system = ChatMessage(Role.SYSTEM, thread.agent.instructions)
        error: str | None = None
        reply = ""
        try:
            async with self._tools.run_scope():
                outcome = await self._backend.run(
                    [system, *snapshot], sink, self._tools, self._observer
                )
            reply = outcome.reply
        except BackendError as exc:
            error = str(exc) or type(exc).__name__
        except asyncio.CancelledError:
            stopped = thread.stopping
            if stopped is None or stopped[0] != run_id:
                draining.cancel()
                raise  # the runtime is closing
            # Interrupted (or reset): this run ends here, and the task ends normally.
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            await sink.queue.put(_END)
            await draining
            self._stopped(thread, run_id, snapshot, produced, stopped[1])
            return
        except Exception as exc:  # a backend's bug must not take the agent down
            log.exception("the backend failed")
            error = f"{type(exc).__name__}: {exc}"
        # Finished only when the outcome is in and the stream has ended.
        await sink.queue.put(_END)
        await draining
        thread.last_run_id = run_id
        thread.run_id = None
        thread.task = None
        if error is None:
            thread.history = [*snapshot, *produced, *thread.history[count:]]
            thread.last_status = "completed"
            self._emit(ThreadRunComplete(thread.id, run_id, reply, len(thread.history)))
        else:
            thread.last_status = "failed"
            self._emit(ThreadRunFailed(thread.id, run_id, error))
        if thread.queued:
            self._start(thread)

    # --- stopping a run ------------------------------------------------------------------------
    def _interrupt(self, thread: Thread, reason: str | None, *, reset: bool) -> bool:
        """Cancel the thread's run; False when there is none."""
        if thread.run_id is None or thread.task is None:
            return False
        thread.stopping = (thread.run_id, reason, reset)
        thread.queued = False
        thread.task.cancel()
        return True

    def _stopped(
        self,
        thread: Thread,
        run_id: str,
        snapshot: list[ChatMessage],
        produced: list[ChatMessage],
        reason: str | None,
    ) -> None:
        """What an interrupted run leaves: what it did (tool calls have happened), a note that
        it was interrupted, then what was added meanwhile; or nothing at all after a reset."""
        assert thread.stopping is not None
        reset = thread.stopping[2]
        thread.stopping = None
        thread.task = None
        thread.run_id = None
        thread.last_run_id = run_id
        thread.last_status = "interrupted"
        self._emit(ThreadRunInterrupted(thread.id, run_id, reason))
        if reset:
            self._clear(thread)
            return
        note = "Your reply was interrupted by the operator before it finished, and not sent."
        if reason:
            note += f" Reason given: {reason}"
        added = thread.history[len(snapshot) :]
        thread.history = [*snapshot, *produced, user(note, source="operator"), *added]
