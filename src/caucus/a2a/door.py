"""The A2A request handler over Caucus's task service.

The caller is the room agent whose bearer token the route checked before dispatch; it is the
task's sender, so everything the task service enforces (caps, pause and stop, who may move a
task) holds for it as for any agent. A message becomes a task to the agent the endpoint names
(or `metadata.to` on the room's endpoint); a message carrying a task id answers that task's
question. Waiting is on the caller's wake-ups, which the task's outcome reaches from any hub
process sharing the database, never on a timer."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any, NoReturn

from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    A2AError,
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    InvalidRequestError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from caucus.a2a import convert
from caucus.domain.peers import Peer
from caucus.domain.tasks import Task, TaskState
from caucus.errors import (
    CaucusError,
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
)
from caucus.services.holds import Hold
from caucus.services.hub import Hub

PAGE_DEFAULT, PAGE_MAX = 50, 100


@contextlib.contextmanager
def _in_a2a_terms(*, task_id: str | None = None) -> Iterator[None]:
    """Caucus's refusals as A2A errors, keeping the stable code in `data`."""
    try:
        yield
    except A2AError:
        raise
    except NotFound as exc:
        if task_id is not None and exc.extra.get("task_id") == task_id:
            raise TaskNotFoundError(exc.detail, data=exc.to_dict()) from None
        raise InvalidParamsError(exc.detail, data=exc.to_dict()) from None
    except (InvalidRequest, PayloadTooLarge) as exc:
        raise InvalidParamsError(exc.detail, data=exc.to_dict()) from None
    except CaucusError as exc:
        raise InvalidRequestError(exc.detail, data=exc.to_dict()) from None


def _caller(context: ServerCallContext) -> Peer:
    peer = context.state.get("caucus_peer")
    if not isinstance(peer, Peer):  # the route checks the token before dispatch
        raise InvalidRequestError("no caller: send your room token as a bearer token")
    return peer


def _ended(context: ServerCallContext) -> asyncio.Future[None] | None:
    """Done when the caller is gone: what its request holds open ends (`services.holds`)."""
    hold = context.state.get("caucus_hold")
    return hold.ended if isinstance(hold, Hold) else None


def _history_length(config: Any) -> int | None:
    return config.history_length if config.HasField("history_length") else None


class Door(RequestHandler):
    """One per served app; `wait_max` bounds a blocking `SendMessage` (the task goes on: the
    caller reads it with `GetTask`, or streams)."""

    def __init__(self, hub: Hub, wait_max: float) -> None:
        self._hub = hub
        self._wait_max = wait_max

    # --- sending ------------------------------------------------------------------------------
    async def _submit(self, params: pb.SendMessageRequest, context: ServerCallContext) -> Task:
        peer = _caller(context)
        message = params.message
        text = convert.message_text(message)
        tasks = self._hub.tasks
        if message.task_id:
            with _in_a2a_terms(task_id=message.task_id):
                task = await tasks.status(peer, message.task_id)
                refusal = UnsupportedOperationError(
                    f"task {task.id} is {task.state.a2a}: a message continues a task only "
                    "while it asks you for input; send one without a task id for a new task"
                )
                if task.state is not TaskState.INPUT_REQUIRED:
                    raise refusal
                try:  # only its sender answers it (by identity: the task service's rule)
                    return await tasks.reply(peer, task.id, text)
                except Forbidden:
                    raise refusal from None
        meta = convert.metadata_of(message)
        to = context.state.get("caucus_to") or meta.get("to")
        if not isinstance(to, str) or not to:
            names = ", ".join(v.name for v in await self._hub.registry.peers()) or "none yet"
            raise InvalidParamsError(
                "name the agent: send to /a2a/<agent>, or set metadata.to on the room's "
                f"endpoint (agents here: {names})"
            )
        subject = meta.get("subject")
        if message.context_id and len(message.context_id) > convert.MAX_CONTEXT:
            raise InvalidParamsError(f"contextId is at most {convert.MAX_CONTEXT} characters")
        with _in_a2a_terms():
            await self._hub.registry.find(to)
            return await tasks.send(
                peer,
                to=to,
                payload=text,
                subject=subject if isinstance(subject, str) and subject else None,
                thread=message.context_id or None,
            )

    async def on_message_send(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> pb.Task | pb.Message:
        task = await self._submit(params, context)
        config = params.configuration
        if not config.return_immediately and not convert.settled(task):
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self._wait_max
            async for changed in self._changes(_caller(context), task, deadline, _ended(context)):
                task = changed
        return convert.task_proto(task, _history_length(config))

    async def on_message_send_stream(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        task = await self._submit(params, context)
        async for event in self._follow(_caller(context), task, _ended(context)):
            yield event

    async def on_subscribe_to_task(
        self, params: pb.SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        task = await self._task(params.id, context)
        if not task.state.open:
            raise UnsupportedOperationError(
                f"task {task.id} is {task.state.a2a}: nothing more will happen to it"
            )
        async for event in self._follow(_caller(context), task, _ended(context)):
            yield event

    async def _follow(
        self, peer: Peer, task: Task, ended: asyncio.Future[None] | None
    ) -> AsyncIterator[Event]:
        """The task as it is, then each change until it settles (or the caller is gone, or
        the hub stops)."""
        yield convert.task_proto(task)
        if convert.settled(task):
            return
        async for changed in self._changes(peer, task, None, ended):
            made = convert.artifact_event(changed)
            if made is not None:
                yield made
            yield convert.status_event(changed)

    async def _changes(
        self,
        peer: Peer,
        task: Task,
        deadline: float | None,
        ended: asyncio.Future[None] | None,
    ) -> AsyncIterator[Task]:
        """Each new state of `task` its sender's wake-ups reveal, until it settles, the
        deadline passes, the caller is gone (`ended`: it left, was kicked or went offline) or
        the hub closes. A wake-up is only a cue: the task is read again."""
        notifier = self._hub.notifier
        loop = asyncio.get_running_loop()
        seen = (task.state, task.updated_at)
        while not notifier.closing and not (ended is not None and ended.done()):
            # Read after listening: an outcome committed between the two still wakes us.
            with notifier.woken(peer.id) as woken:
                with _in_a2a_terms(task_id=task.id):
                    task = await self._hub.tasks.status(peer, task.id)
                if (task.state, task.updated_at) != seen:
                    seen = (task.state, task.updated_at)
                    yield task
                if convert.settled(task):
                    return
                left = None if deadline is None else deadline - loop.time()
                if left is not None and left <= 0:
                    return
                waits = {woken} if ended is None else {woken, ended}
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)

    # --- reading and canceling ------------------------------------------------------------
    async def _task(self, task_id: str, context: ServerCallContext) -> Task:
        with _in_a2a_terms(task_id=task_id):
            return await self._hub.tasks.status(_caller(context), task_id)

    async def on_get_task(self, params: pb.GetTaskRequest, context: ServerCallContext) -> pb.Task:
        task = await self._task(params.id, context)
        return convert.task_proto(task, _history_length(params))

    async def on_list_tasks(
        self, params: pb.ListTasksRequest, context: ServerCallContext
    ) -> pb.ListTasksResponse:
        """The caller's tasks (to the endpoint's agent, on an agent's endpoint), newest first."""
        to = context.state.get("caucus_to")
        with _in_a2a_terms():
            sent = await self._hub.tasks.listing(_caller(context), "sent", None)
        wanted = set(convert.FROM_STATE.get(params.status, [])) if params.status else None
        after = (
            params.status_timestamp_after.ToNanoseconds() / 1e9
            if params.HasField("status_timestamp_after")
            else None
        )
        found = [
            t
            for t in sent
            if (to is None or t.worker == to)
            and (not params.context_id or t.thread == params.context_id)
            and (wanted is None or t.state in wanted)
            and (after is None or t.updated_at > after)
        ]
        size = params.page_size if params.HasField("page_size") else PAGE_DEFAULT
        if not 1 <= size <= PAGE_MAX:
            raise InvalidParamsError(f"pageSize is 1-{PAGE_MAX}")
        try:
            start = int(params.page_token) if params.page_token else 0
        except ValueError:
            raise InvalidParamsError("pageToken is one a previous page gave") from None
        page = found[start : start + size]
        following = str(start + size) if start + size < len(found) else ""
        history = _history_length(params)
        artifacts = params.include_artifacts if params.HasField("include_artifacts") else False
        made = [convert.task_proto(t, history) for t in page]
        if not artifacts:
            for task in made:
                del task.artifacts[:]
        return pb.ListTasksResponse(
            tasks=made, next_page_token=following, page_size=size, total_size=len(found)
        )

    async def on_cancel_task(
        self, params: pb.CancelTaskRequest, context: ServerCallContext
    ) -> pb.Task:
        with _in_a2a_terms(task_id=params.id):
            try:
                task = await self._hub.tasks.cancel(_caller(context), params.id)
            except (Conflict, Forbidden) as exc:
                raise TaskNotCancelableError(exc.detail, data=exc.to_dict()) from None
        return convert.task_proto(task)

    # --- what the door does not offer -------------------------------------------------------
    @staticmethod
    def _no_push() -> NoReturn:
        raise PushNotificationNotSupportedError(
            "this hub does not call out: stream the task (SendStreamingMessage) or read it "
            "with GetTask"
        )

    async def on_create_task_push_notification_config(
        self, params: pb.TaskPushNotificationConfig, context: ServerCallContext
    ) -> pb.TaskPushNotificationConfig:
        self._no_push()

    async def on_get_task_push_notification_config(
        self, params: pb.GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> pb.TaskPushNotificationConfig:
        self._no_push()

    async def on_list_task_push_notification_configs(
        self, params: pb.ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        self._no_push()

    async def on_delete_task_push_notification_config(
        self, params: pb.DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        self._no_push()

    async def on_get_extended_agent_card(
        self, params: pb.GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> pb.AgentCard:
        raise ExtendedAgentCardNotConfiguredError(
            "the public card is the whole card: every agent here is on it"
        )
