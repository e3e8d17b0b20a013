"""Tasks: hand a peer work and get an answer back, reliably.

The worker receives a `task` item like any other; receiving it claims the task. It then ends the
task with exactly one of reply (completed: a `result` item to the sender), fail (failed: a
`failure` item) or request_input (parked: an `input_request` item; the sender's reply to it is
the answer, and the task goes back to the worker). The sender may cancel. Every change and the
item it sends commit together, and a second ending gets 409 and changes nothing.
"""

from __future__ import annotations

from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.messages import MessageKind, NewMessage, SystemSender
from caucus.domain.names import BROADCAST, TargetKind, parse_target
from caucus.domain.peers import Peer
from caucus.domain.tasks import MAX_SUBJECT, TRANSITIONS, Task, TaskMove, TaskState
from caucus.errors import Hint, InvalidRequest, NotFound, PayloadTooLarge
from caucus.ids import MessageIds
from caucus.services.delivery import DeliveryService
from caucus.storage.base import Store


def _meta(task: Task, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"task_id": task.id, "state": task.state.value}
    if task.subject:
        meta["subject"] = task.subject
    meta.update({k: v for k, v in extra.items() if v is not None})
    return meta


class TaskService:
    def __init__(
        self, store: Store, delivery: DeliveryService, clock: Clock, settings: Settings
    ) -> None:
        self._store = store
        self._delivery = delivery
        self._clock = clock
        self._settings = settings
        self._ids = MessageIds()

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
        return NewMessage(
            id=self._delivery.new_id(),
            ts=self._clock.now(),
            sender_id=sender.id if sender else None,
            sender=sender.name if sender else SystemSender.HUB,
            to=to,
            kind=kind.value,
            content=content,
            meta=_meta(task, **meta),
            thread=task.thread,
        )

    # --- the sender ---------------------------------------------------------------------------
    async def send(
        self,
        peer: Peer,
        *,
        to: str,
        payload: str,
        subject: str | None = None,
        thread: str | None = None,
    ) -> Task:
        target = parse_target(to)
        if target.kind is not TargetKind.PEER or target.name == BROADCAST:
            raise InvalidRequest("a task goes to one peer, by name", field="to")
        self._check_text(payload, "payload")
        if subject is not None and len(subject) > MAX_SUBJECT:
            raise InvalidRequest(f"subject is at most {MAX_SUBJECT} characters", field="subject")
        self._delivery.check_can_send(peer)
        now = self._clock.now()
        task_id = "t_" + self._ids.next().removeprefix("m_")
        draft = Task(
            task_id,
            peer.name,
            to,
            subject,
            payload,
            thread or task_id,
            TaskState.PENDING,
            now,
            now,
            now + self._settings.task_ttl,
        )
        task, outcome = await self._store.create_task(
            task_id=task_id,
            sender_id=peer.id,
            sender=peer.name,
            to=target.name,
            subject=subject,
            payload=payload,
            thread=draft.thread,
            now=now,
            expires_at=draft.expires_at,
            message=self._item(
                draft, MessageKind.TASK, sender=peer, to=target.name, content=payload
            ),
        )
        self._delivery.after_append(outcome)
        return task

    async def cancel(self, peer: Peer, task_id: str) -> Task:
        return await self._move(
            peer,
            task_id,
            move=TaskMove.CANCEL,
            fields={},
            notify=lambda t: (
                self._item(
                    t,
                    MessageKind.TASK_CANCELED,
                    sender=peer,
                    to=t.worker,
                    content=f"task {t.id} was canceled by {t.sender}",
                ),
                t.worker,
            ),
        )

    # --- either side ----------------------------------------------------------------------
    async def reply(self, peer: Peer, task_id: str, text: str) -> Task:
        """The worker's reply completes the task; the sender's reply answers its question."""
        self._check_text(text, "result")
        parties = await self._store.task_parties(task_id)
        if parties is None or peer.id not in parties:
            raise NotFound(f"no task {task_id!r}", hint=Hint.LIST_TASKS, task_id=task_id)
        if peer.id == parties[0] and peer.id != parties[1]:
            return await self._answer(peer, task_id, text)
        return await self._move(
            peer,
            task_id,
            move=TaskMove.COMPLETE,
            fields={"result": text},
            notify=lambda t: (
                self._item(t, MessageKind.RESULT, sender=peer, to=t.sender, content=text),
                t.sender,
            ),
        )

    async def _answer(self, peer: Peer, task_id: str, answer: str) -> Task:
        return await self._move(
            peer,
            task_id,
            move=TaskMove.ANSWER,
            fields={"answer": answer},
            notify=lambda t: (
                self._item(
                    t,
                    MessageKind.TASK,
                    sender=peer,
                    to=t.worker,
                    content=t.payload,
                    question=t.question,
                    answer=answer,
                ),
                t.worker,
            ),
            detail="answered",
        )

    # --- the worker -----------------------------------------------------------------------
    async def fail(self, peer: Peer, task_id: str, error: str) -> Task:
        self._check_text(error, "error")
        return await self._move(
            peer,
            task_id,
            move=TaskMove.FAIL,
            fields={"error": error},
            notify=lambda t: (
                self._item(t, MessageKind.FAILURE, sender=peer, to=t.sender, content=error),
                t.sender,
            ),
        )

    async def request_input(self, peer: Peer, task_id: str, question: str) -> Task:
        self._check_text(question, "question")
        return await self._move(
            peer,
            task_id,
            move=TaskMove.ASK,
            fields={"question": question},
            notify=lambda t: (
                self._item(
                    t, MessageKind.INPUT_REQUEST, sender=peer, to=t.sender, content=question
                ),
                t.sender,
            ),
        )

    async def _move(
        self,
        peer: Peer,
        task_id: str,
        *,
        move: TaskMove,
        fields: dict[str, Any],
        notify: Any,
        detail: str | None = None,
    ) -> Task:
        rule = TRANSITIONS[move]
        task, outcome = await self._store.task_transition(
            task_id,
            actor_id=peer.id,
            actor=peer.name,
            role=rule.actor.value,
            allowed=rule.allowed,
            to_state=rule.to_state,
            now=self._clock.now(),
            fields=fields,
            notify=notify,
            detail=detail,
        )
        if outcome is not None:
            self._delivery.after_append(outcome)
        return task

    # --- reading --------------------------------------------------------------------------
    async def status(self, peer: Peer, task_id: str) -> Task:
        task = await self._store.get_task(task_id)
        if task is None or peer.name not in (task.sender, task.worker):
            raise NotFound(f"no task {task_id!r}", hint=Hint.LIST_TASKS, task_id=task_id)
        return task

    async def listing(self, peer: Peer, role: str, state: str | None) -> list[Task]:
        if role not in ("sent", "received"):
            raise InvalidRequest("role is 'sent' or 'received'", field="role")
        try:
            wanted = TaskState(state) if state else None
        except ValueError:
            names = ", ".join(s.value for s in TaskState)
            raise InvalidRequest(f"status is one of {names}", field="status") from None
        return await self._store.list_tasks(peer.id, role, wanted)

    async def all(self, state: str | None = None, limit: int = 200) -> list[Task]:
        """Every peer's tasks, most recently changed first (the operator's view)."""
        try:
            wanted = TaskState(state) if state else None
        except ValueError:
            names = ", ".join(s.value for s in TaskState)
            raise InvalidRequest(f"status is one of {names}", field="status") from None
        if not 1 <= limit <= 500:
            raise InvalidRequest("limit is 1-500", field="limit")
        return await self._store.all_tasks(wanted, limit)

    # --- the hub --------------------------------------------------------------------------
    async def sweep(self) -> None:
        """Requeue tasks whose worker went silent; expire unclaimed and parked ones."""

        def requeue(t: Task) -> NewMessage:
            return self._item(
                t, MessageKind.TASK, sender=None, to=t.worker, content=t.payload, requeued=True
            )

        def expire(t: Task) -> NewMessage:
            return self._item(
                t,
                MessageKind.FAILURE,
                sender=None,
                to=t.sender,
                content=f"task {t.id} expired before it was done",
            )

        now = self._clock.now()
        silent_before = now - self._settings.task_visibility_timeout
        for outcome in await self._store.sweep_tasks(now, silent_before, requeue, expire):
            self._delivery.after_append(outcome)
