"""The orchestrator: one reactor between the outside (input lines, notices) and the runtime.

It multiplexes input lines, notices and the runtime's events in one `WorkSet`, owns only
routing state (the agent, the active thread, the last run and its status), writes every event
as one NDJSON line, and turns what arrives into runtime actions through waiting rules:

- the agent is there (created or retrieved) -> `NewThread`, once: a `new_thread_requested`
  flag keeps buffered input from asking for a second thread;
- the thread is created -> `AddMessage` with everything buffered meanwhile, folded into one
  message (so startup, with its On Start notice and any notices queued before it, is one turn);
- a message is added -> `RunThread`. `ThreadMessageAdded` is forgotten on each new input, so
  the next turn waits for the next message rather than matching the last one.

A notice (`source`, `text`) follows the same rules as input; one that arrives during a run is
appended and queues one follow-up run, however many arrive (the runtime keeps that count).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from caucus.models.chat import ChatMessage, user
from caucus.runtime.actions import (
    Action,
    AddMessage,
    GetOrCreateAgent,
    HoldThread,
    InterruptRun,
    NewThread,
    ResetThread,
    RunThread,
)
from caucus.runtime.agent import AgentRuntime
from caucus.runtime.events import (
    ControlReceived,
    Event,
    ExistingAgentRetrieved,
    InputReceived,
    NewAgentCreated,
    NewThreadCreated,
    NewThreadRunCreated,
    NoticeReceived,
    Observer,
    ThreadMessageAdded,
    ThreadRunComplete,
    ThreadRunFailed,
    ThreadRunInterrupted,
)
from caucus.runtime.onstart import ON_START_SOURCE, Prompt
from caucus.runtime.waiting import Rule, WaitingEngine, on
from caucus.runtime.workset import STOP, WorkSet

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Notice:
    source: str
    text: str


@dataclass(frozen=True, slots=True)
class Control:
    """The operator's word, obeyed at once: `interrupt` aborts the run under way, `reset`
    drops the history, `stop` takes no more input, lets what runs finish, and ends."""

    action: str
    reason: str | None = None


class NoticeQueue:
    """Notices (and controls) from several sources as one stream: sources `put` into it, or
    are pumped into it (`pump`). It never ends by itself: the orchestrator's `waiting_for`
    says whether any source may still speak."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Notice | Control] = asyncio.Queue()
        self._pumps: set[asyncio.Task[None]] = set()

    def put(self, item: Notice | Control) -> None:
        self._queue.put_nowait(item)

    def pump(self, source: AsyncIterator[Notice | Control]) -> None:
        async def forward() -> None:
            async for item in source:
                self.put(item)

        task = asyncio.ensure_future(forward())
        self._pumps.add(task)
        task.add_done_callback(self._pumps.discard)

    def __aiter__(self) -> AsyncIterator[Notice | Control]:
        return self

    async def __anext__(self) -> Notice | Control:
        return await self._queue.get()

    async def close(self) -> None:
        for task in list(self._pumps):
            task.cancel()
        for task in list(self._pumps):
            with contextlib.suppress(asyncio.CancelledError):
                await task


def notice_message(notice: Notice) -> ChatMessage:
    return user(f"[notice from {notice.source}]\n{notice.text}", source=notice.source)


def fold(messages: list[ChatMessage]) -> ChatMessage:
    """Several user messages as one (one turn, and no two user messages in a row, which some
    chat templates refuse). It keeps the newest message's source: that is who an answer is
    for."""
    if len(messages) == 1:
        return messages[0]
    return user("\n\n".join(m.content for m in messages), source=messages[-1].source)


class Orchestrator:
    def __init__(
        self,
        runtime: AgentRuntime,
        *,
        name: str,
        prompt: Prompt,
        write: Observer,
        max_turns: int | None = None,
        waiting_for: Callable[[], bool] | None = None,
    ) -> None:
        self._runtime = runtime
        self._name = name
        self._prompt = prompt
        self._write = write
        self._max_turns = max_turns
        # Whether a notice may still come (a hub, a watch); None: while the notices are open.
        self._waiting_for = waiting_for
        self._rules = WaitingEngine()
        self._pending: list[ChatMessage] = []
        self._new_thread_requested = False
        self._added_during_run = False
        self.agent_id: str | None = None
        self.thread_id: str | None = None
        self.last_run_id: str | None = None
        self.last_status = "none"
        self.turns = 0
        self.stopping = False

    async def run(
        self, lines: AsyncIterator[str], notices: AsyncIterator[Notice | Control] | None = None
    ) -> None:
        """Until the input has ended (and the notices, if any) and the agent is idle, or until
        `max_turns` runs have ended. Every task it started is gone when it returns."""
        open_inputs = {"line"} | ({"notice"} if notices is not None else set())
        async with WorkSet[str]() as work:
            work.pump("line", lines)
            if notices is not None:
                work.pump("notice", notices)
            work.add("event", self._runtime.next_event())
            await self._apply([GetOrCreateAgent(self._name, self._prompt.instructions)])
            if self._prompt.on_start is not None:
                await self._notice(Notice(ON_START_SOURCE, self._prompt.on_start))
            while not self._turns_spent():
                # An event already taken from the runtime but not handled yet keeps it going.
                if not work.ready() and self._idle(open_inputs):
                    break
                done = await work.next()
                value = done.result()
                if done.key == "event":
                    await self._event(value)
                    work.add("event", self._runtime.next_event())
                elif value is STOP:
                    open_inputs.discard(done.key)
                elif done.key == "line":
                    await self._input(value)
                    work.pump("line", lines)
                elif isinstance(value, Control):
                    await self._control(value)
                    if self.stopping:
                        # No more input and nothing to wait for: the agent ends when the run
                        # under way does. Controls are still heard until then, so an
                        # interrupt after the stop ends that run at once.
                        work.cancel("line")
                        open_inputs.clear()
                    work.pump("notice", notices)  # type: ignore[arg-type]
                else:
                    if not self.stopping:  # after a stop, a notice starts nothing
                        await self._notice(value)
                    work.pump("notice", notices)  # type: ignore[arg-type]
        await self._runtime.close()

    def _turns_spent(self) -> bool:
        if self._max_turns is not None and self.turns >= self._max_turns:
            log.info("max turns reached (%d): stopping", self._max_turns)
            return True
        return False

    def _idle(self, open_inputs: set[str]) -> bool:
        """Nothing more can arrive, and nothing is waiting, running or queued."""
        idle = not self._rules.armed and not self._pending and not self._runtime.busy
        waiting = "line" in open_inputs or (
            "notice" in open_inputs and (self._waiting_for is None or self._waiting_for())
        )
        return idle and not waiting

    # --- what arrives ------------------------------------------------------------------------
    async def _input(self, line: str) -> None:
        text = line.rstrip("\r\n")
        if not text.strip():
            return
        self._write(InputReceived(text))
        await self._deliver(user(text))

    async def _notice(self, notice: Notice) -> None:
        self._write(NoticeReceived(notice.source, notice.text))
        await self._deliver(notice_message(notice))

    async def _control(self, control: Control) -> None:
        self._write(ControlReceived(control.action, control.reason))
        if control.action == "stop":
            self.stopping = True
            self._rules.armed.clear()  # nothing new starts; a run under way finishes
            self._pending.clear()
            if self.thread_id is not None:
                await self._apply([HoldThread(self.thread_id)])
        elif control.action == "reset":
            self._pending.clear()
            if self.thread_id is not None:
                await self._apply([ResetThread(self.thread_id)])
        elif control.action == "interrupt" and self.thread_id is not None:
            await self._apply([InterruptRun(self.thread_id, control.reason)])

    async def _deliver(self, message: ChatMessage) -> None:
        if self.thread_id is None:
            self._pending.append(message)
            if self._new_thread_requested:
                return  # the thread asked for will take it
            self._new_thread_requested = True
            await self._arm(
                Rule(
                    "new thread",
                    on(NewAgentCreated, ExistingAgentRetrieved),
                    lambda: [NewThread(self._agent())],
                )
            )
            await self._arm(Rule("first message", on(NewThreadCreated), self._first_message))
        else:
            await self._apply([AddMessage(self.thread_id, message)])
        self._rules.forget(ThreadMessageAdded)
        if not self._rules.waiting("run"):
            await self._arm(Rule("run", on(ThreadMessageAdded), self._run_for_message))

    def _run_for_message(self) -> list[Action]:
        # A message added during a run has its follow-up run queued by the runtime already.
        return [] if self._added_during_run else [RunThread(self._thread())]

    def _first_message(self) -> list[Action]:
        message, self._pending = fold(self._pending), []
        return [AddMessage(self._thread(), message)]

    # --- the runtime's events ----------------------------------------------------------------
    async def _event(self, event: Event) -> None:
        if isinstance(event, NewAgentCreated | ExistingAgentRetrieved):
            self.agent_id = event.agent_id
        elif isinstance(event, NewThreadCreated):
            self.thread_id = event.thread_id
        elif isinstance(event, ThreadMessageAdded):
            self._added_during_run = event.during_run is not None
        elif isinstance(event, NewThreadRunCreated):
            self.last_run_id, self.last_status = event.run_id, "running"
        elif isinstance(event, ThreadRunComplete):
            self.last_status = "completed"
            self.turns += 1
        elif isinstance(event, ThreadRunFailed):
            self.last_status = "failed"
            self.turns += 1
            log.warning("run %s failed: %s", event.run_id, event.error)
        elif isinstance(event, ThreadRunInterrupted):
            self.last_status = "interrupted"
        self._write(event)
        await self._apply(self._rules.see(type(event)))

    async def _arm(self, rule: Rule) -> None:
        await self._apply(self._rules.arm(rule))

    async def _apply(self, actions: list[Action]) -> None:
        for action in actions:
            await self._runtime.apply(action)

    def _agent(self) -> str:
        assert self.agent_id is not None  # the rule fires only once the agent is there
        return self.agent_id

    def _thread(self) -> str:
        assert self.thread_id is not None
        return self.thread_id
