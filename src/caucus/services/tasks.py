"""Tasks: hand a peer work and get an answer back, reliably.

The worker receives a `task` item like any other; receiving it claims the task. It then ends the
task with exactly one of reply (completed: a `result` item to the sender), fail (failed: a
`failure` item) or request_input (parked: an `input_request` item; the sender's reply to it is
the answer, and the task goes back to the worker). The sender may cancel. Every change and the
item it sends commit together, and a second ending gets 409 and changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.dependencies import DEFAULT_PRIORITY, OnFailure
from caucus.domain.events import TasksChanged
from caucus.domain.messages import AppendOutcome, MessageKind, NewMessage, SystemSender
from caucus.domain.names import BROADCAST, TargetKind, parse_target
from caucus.domain.peers import Peer
from caucus.domain.tasks import (
    FOLLOW_UP,
    MAX_SUBJECT,
    TRANSITIONS,
    MoveRefused,
    Task,
    TaskMove,
    TaskRole,
    TaskState,
    next_state,
)
from caucus.domain.visibility import Reader, may_see_task
from caucus.errors import Conflict, Forbidden, Hint, InvalidRequest, NotFound, PayloadTooLarge
from caucus.ids import MessageIds
from caucus.services.delivery import DeliveryService
from caucus.services.dependencies import TaskGraph, check_terms
from caucus.services.notifier import Notifier
from caucus.services.task_follow import follow_task
from caucus.services.task_sweep import TaskSweep
from caucus.services.task_units import open_task, wait_task
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos
from caucus.storage.repos.tasks import StoredTask

# What a move sends, to whom (None: nothing); a move chosen for a task: (move, fields, what it
# sends, detail).
Step = tuple[NewMessage, str] | None
Move = tuple[TaskMove, dict[str, str], Callable[[Task], Step], str | None]
# A reaction to a task's change, inside the same unit (the job board's, the task graph's),
# and what it sends.
Reaction = Callable[[Repos, Task, TaskState, float], list[AppendOutcome] | None]


def _meta(task: Task, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"task_id": task.id, "state": task.state.value}
    if task.subject:
        meta["subject"] = task.subject
    meta.update({k: v for k, v in extra.items() if v is not None})
    return meta


class TaskService:
    def __init__(
        self,
        db: Engine,
        delivery: DeliveryService,
        notifier: Notifier,
        clock: Clock,
        settings: Settings,
    ) -> None:
        self._db = db
        self._notifier = notifier
        self.on_moved: list[Reaction] = []  # called in every move's unit (the job board)
        self._delivery = delivery
        self._clock = clock
        self._settings = settings
        self._ids = MessageIds()
        self.graph = TaskGraph(self._graph_item, settings.task_ttl)
        self.on_moved.append(self.graph.settle)

    def _graph_item(
        self, task: Task, kind: MessageKind, sender: str, to: str, content: str
    ) -> NewMessage:
        return self._delivery.compose(
            sender, to, kind.value, content, meta=_meta(task), thread=task.thread
        )

    def _check_text(self, text: str, what: str) -> None:
        limit = self._settings.max_content_chars
        if not text:
            raise InvalidRequest(f"{what} is empty", field=what)
        if len(text) > limit:
            raise PayloadTooLarge(
                f"{what} is {len(text)} characters; the limit is {limit}", field=what
            )

    def _item(
        self,
        task: Task,
        kind: MessageKind,
        *,
        sender: Peer | None,
        to: str,
        content: str,
        **meta: Any,
    ) -> NewMessage:
        return self._delivery.compose(
            sender or SystemSender.HUB,
            to,
            kind.value,
            content,
            meta=_meta(task, **meta),
            thread=task.thread,
        )

    # --- the sender ---------------------------------------------------------------------------
    def _checked(self, peer: Peer, to: str, payload: str, subject: str | None) -> str:
        """The worker a task to `to` goes to, once the task may be sent at all."""
        target = parse_target(to)
        if target.kind is not TargetKind.PEER or target.name == BROADCAST:
            raise InvalidRequest("a task goes to one peer, by name", field="to")
        self._check_text(payload, "payload")
        if subject is not None and len(subject) > MAX_SUBJECT:
            raise InvalidRequest(f"subject is at most {MAX_SUBJECT} characters", field="subject")
        self._delivery.check_can_send(peer)
        return target.name

    async def send(
        self,
        peer: Peer,
        *,
        to: str,
        payload: str,
        subject: str | None = None,
        thread: str | None = None,
        blocked_by: list[str] | None = None,
        priority: int = DEFAULT_PRIORITY,
        on_failure: str = OnFailure.CANCEL,
    ) -> Task:
        """Hand `to` a task. With `blocked_by`, it waits until those tasks are done (stored
        blocked, its item not sent); `on_failure` says what one of them failing does."""
        policy = check_terms(blocked_by, priority, on_failure)
        worker = self._checked(peer, to, payload, subject)
        now = self._clock.now()
        task_id = "t_" + self._ids.next().removeprefix("m_")
        expires_at = now + self._settings.task_ttl
        draft = Task(
            task_id, peer.name, worker, subject, payload, thread or task_id,
            TaskState.PENDING, now, now, expires_at,
        )  # fmt: skip
        item = self._item(draft, MessageKind.TASK, sender=peer, to=worker, content=payload)
        terms: dict[str, Any] = {
            "task_id": task_id,
            "sender_id": peer.id,
            "sender": peer.name,
            "to": worker,
            "subject": subject,
            "payload": payload,
            "thread": draft.thread,
            "now": now,
            "expires_at": expires_at,
            "priority": priority,
            "on_failure": policy.value,
        }

        def unit(r: Repos) -> tuple[Task, AppendOutcome | None]:
            outcome = None
            if TaskGraph.unmet(r, peer, None, blocked_by or [], policy):
                task = wait_task(r, **terms)  # its item waits with it
            else:
                task, outcome = open_task(r, message=item, **terms)
            if blocked_by:
                r.dependencies.add(task_id, blocked_by)
                task.blocked_by = list(dict.fromkeys(blocked_by))
            return task, outcome

        task, outcome = await self._db.write(unit)
        if outcome is not None:
            self._delivery.after_append(outcome)
        else:
            self._quietly(task, "blocked")
        return task

    def _quietly(self, task: Task, change: str) -> None:
        """Say a task changed where no item told anyone (the console follows tasks by
        their items)."""
        self._delivery.notifier.emit(TasksChanged(self._clock.now(), change, task.id))

    async def depend(self, peer: Peer, task_id: str, blocked_by: list[str]) -> Task:
        """Make a task that still waits wait on more tasks (its sender only; never a cycle)."""
        if not blocked_by:
            raise InvalidRequest("blocked_by names the tasks to wait on", field="blocked_by")

        def unit(r: Repos) -> Task:
            found = r.tasks.stored(task_id)
            if found is None or peer.id not in (found.sender_id, found.worker_id):
                raise NotFound(f"no task {task_id!r}", hint=Hint.LIST_TASKS, task_id=task_id)
            if peer.id != found.sender_id:
                raise Forbidden("only the task's sender may make it wait")
            policy = check_terms(blocked_by, found.task.priority, found.task.on_failure)
            if not found.task.blocked:
                raise Conflict(
                    f"task {task_id} is {found.task.state.value} and went to its worker: only "
                    "a task still waiting may wait on more (send a new one with blocked_by)",
                    task_id=task_id,
                )
            TaskGraph.unmet(r, peer, task_id, blocked_by, policy)
            r.dependencies.add(task_id, blocked_by)
            task = r.tasks.get(task_id)
            assert task is not None
            return task

        task = await self._db.write(unit)
        self._quietly(task, "waits")
        return task

    async def ready(self, peer: Peer, limit: int = 50) -> list[Task]:
        """What `peer` can start now: its pending tasks nothing holds back, most urgent and
        then oldest first."""
        if not 1 <= limit <= 200:
            raise InvalidRequest("limit is 1-200", field="limit")
        # With their history and what they waited on, as every other view of a task shows it.
        return await self._db.read(
            lambda r: [r.tasks.with_history(t) for t in r.dependencies.ready(peer.id, limit)]
        )

    async def cancel(self, peer: Peer, task_id: str) -> Task:
        def step(t: Task) -> Step:
            if t.blocked:
                return None  # its worker never saw it
            notice = self._item(
                t,
                MessageKind.TASK_CANCELED,
                sender=peer,
                to=t.worker,
                content=f"task {t.id} was canceled by {t.sender}",
            )
            return notice, t.worker

        return await self._move(peer, task_id, lambda _: (TaskMove.CANCEL, {}, step, None))

    # --- either side ----------------------------------------------------------------------
    async def reply(self, peer: Peer, task_id: str, text: str) -> Task:
        """The worker's reply completes the task; the sender's reply answers its question."""
        self._check_text(text, "result")

        def complete(t: Task) -> Step:
            return self._item(
                t, MessageKind.RESULT, sender=peer, to=t.sender, content=text
            ), t.sender

        def answer(t: Task) -> Step:
            item = self._item(
                t,
                MessageKind.TASK,
                sender=peer,
                to=t.worker,
                content=t.payload,
                question=t.question,
                answer=text,
            )
            return item, t.worker

        def choose(found: StoredTask) -> Move:
            if peer.id == found.sender_id and peer.id != found.worker_id:
                return TaskMove.ANSWER, {"answer": text}, answer, "answered"
            return TaskMove.COMPLETE, {"result": text}, complete, None

        return await self._move(peer, task_id, choose)

    async def follow_up(self, peer: Peer, task_id: str, text: str) -> Task:
        """The sender's further word on its task under way: a message to its worker on the
        task's thread (A2A's message with a task id). Only its sender, by identity."""
        found = await self._db.read(lambda r: r.tasks.with_parties(task_id))
        if found is None or found.sender_id != peer.id:
            raise NotFound(f"no task {task_id!r} of yours", hint=Hint.LIST_TASKS, task_id=task_id)
        task = found.task
        await self._delivery.send(
            peer, to=task.worker, content=text, thread=task.thread, meta=_meta(task)
        )
        now = self._clock.now()
        await self._db.write(
            lambda r: r.tasks.event(task_id, now, task.state, peer.name, FOLLOW_UP + text)
        )
        return await self.status(peer, task_id)

    # --- the worker -----------------------------------------------------------------------
    async def fail(self, peer: Peer, task_id: str, error: str) -> Task:
        self._check_text(error, "error")

        def step(t: Task) -> Step:
            return self._item(
                t, MessageKind.FAILURE, sender=peer, to=t.sender, content=error
            ), t.sender

        return await self._move(
            peer, task_id, lambda _: (TaskMove.FAIL, {"error": error}, step, None)
        )

    async def request_input(self, peer: Peer, task_id: str, question: str) -> Task:
        self._check_text(question, "question")

        def step(t: Task) -> Step:
            item = self._item(
                t, MessageKind.INPUT_REQUEST, sender=peer, to=t.sender, content=question
            )
            return item, t.sender

        return await self._move(
            peer, task_id, lambda _: (TaskMove.ASK, {"question": question}, step, None)
        )

    async def _move(self, peer: Peer, task_id: str, choose: Callable[[StoredTask], Move]) -> Task:
        """One unit: read the task, let the domain decide the move (the acting party, the
        states it is allowed from), write the change, its history, the job board's reaction
        and the item it sends to the other party."""
        now = self._clock.now()
        react = self.on_moved

        def unit(r: Repos) -> tuple[Task, list[AppendOutcome]]:
            found = r.tasks.stored(task_id)
            if found is None or peer.id not in (found.sender_id, found.worker_id):
                raise NotFound(f"no task {task_id!r}", hint=Hint.LIST_TASKS, task_id=task_id)
            move, fields, tell, detail = choose(found)
            role = TaskRole.WORKER if peer.id == found.worker_id else TaskRole.SENDER
            state = found.task.state
            if found.task.blocked and move is not TaskMove.CANCEL:
                raise Conflict(
                    f"task {task_id} waits on {', '.join(found.task.blocked_by) or 'others'}: "
                    "it is not yours to work yet",
                    task_id=task_id,
                    state="blocked",
                )
            try:
                to_state = next_state(move, state, role)
            except MoveRefused as refused:
                if refused.wrong_party:
                    raise Forbidden(
                        f"only the task's {TRANSITIONS[move].actor.value} may do that"
                    ) from None
                raise Conflict(
                    f"task {task_id} is {state.value}: that is not possible now",
                    task_id=task_id,
                    state=state.value,
                ) from None
            moved = r.tasks.move(task_id, state, to_state, now, **fields)
            assert moved, "a task read in this unit moved under it"
            r.tasks.event(task_id, now, to_state, peer.name, detail)
            told: list[AppendOutcome | None] = []
            for reaction in react:
                told += reaction(r, found.task, to_state, now) or []
            # Built, not read back: the unit knows what it stored, and a round trip is four
            # requests that would each pay for the read.
            task = r.tasks.with_history(r.tasks.as_moved(found.task, to_state, now, fields))
            step = tell(task)
            if step is not None:
                told.append(r.inbox.to_peer(*step))
            return task, [o for o in told if o is not None]

        task, outcomes = await self._db.write(unit)
        for outcome in outcomes:
            self._delivery.after_append(outcome)
        if not outcomes:
            self._quietly(task, task.state.value)
        return task

    # --- reading --------------------------------------------------------------------------
    async def status(self, peer: Peer, task_id: str) -> Task:
        """A task of `peer`'s (its sender or its worker, by identity: `domain.visibility`);
        anyone else's is the same 404 as one that does not exist."""
        found = await self._db.read(lambda r: r.tasks.with_parties(task_id))
        if found is None or not may_see_task(
            Reader(peer.id), sender_id=found.sender_id, worker_id=found.worker_id
        ):
            raise NotFound(f"no task {task_id!r}", hint=Hint.LIST_TASKS, task_id=task_id)
        return found.task

    async def blockers(self, peer: Peer, task_id: str) -> list[Task]:
        """The tasks a task of `peer`'s waits (or waited) on, oldest first, with their states:
        those `peer` may read itself (`blocked_by` names them all)."""
        task = await self.status(peer, task_id)
        reader = Reader(peer.id)

        def read(r: Repos) -> list[Task]:
            found = [r.tasks.with_parties(t) for t in task.blocked_by]
            return [
                f.task
                for f in found
                if f is not None
                and may_see_task(reader, sender_id=f.sender_id, worker_id=f.worker_id)
            ]

        return await self._db.read(read)

    async def listing(self, peer: Peer, role: str, state: str | None) -> list[Task]:
        if role not in ("sent", "received"):
            raise InvalidRequest("role is 'sent' or 'received'", field="role")
        try:
            wanted = TaskState(state) if state else None
        except ValueError:
            names = ", ".join(s.value for s in TaskState)
            raise InvalidRequest(f"status is one of {names}", field="status") from None
        return await self._db.read(lambda r: r.tasks.of_party(peer.id, role, wanted))

    async def all(self, state: str | None = None, limit: int = 200) -> list[Task]:
        """Every peer's tasks, most recently changed first (the operator's view)."""
        try:
            wanted = TaskState(state) if state else None
        except ValueError:
            names = ", ".join(s.value for s in TaskState)
            raise InvalidRequest(f"status is one of {names}", field="status") from None
        if not 1 <= limit <= 500:
            raise InvalidRequest("limit is 1-500", field="limit")
        return await self._db.read(lambda r: r.tasks.all(wanted, limit))

    # --- the hub --------------------------------------------------------------------------
    async def sweep(self) -> None:
        """Fail back, requeue and expire what needs it (`services/task_sweep.py`)."""
        now = self._clock.now()
        silent_before = now - self._settings.task_visibility_timeout
        sweep = TaskSweep(self._item, self.on_moved, now, silent_before)
        for outcome in await self._db.write(sweep):
            self._delivery.after_append(outcome)

    # --- following ------------------------------------------------------------------------
    def follow(
        self,
        peer: Peer,
        task_id: str,
        *,
        since: Task | None = None,
        until: float | None = None,
        ended: Iterable[asyncio.Future[Any]] = (),
    ) -> AsyncGenerator[Task, None]:
        """Each new state of one of `peer`'s tasks, as its wake-ups reveal it (from any hub
        process), until it ends, `until` (the hub's clock), any of `ended` is done, or the hub
        stops: what every door that waits for a task reads (`services/task_follow.py`)."""
        return follow_task(self, self._notifier, self._clock, peer, task_id, since, until, ended)
