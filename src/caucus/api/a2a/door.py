"""The A2A request handler over Caucus's task service.

The caller is the room agent whose bearer token the route checked before dispatch; it is the
task's sender, so everything the task service enforces (caps, pause and stop, who may move a
task) holds for it as for any agent. A message becomes a task to the agent the endpoint names
(or `metadata.to` on the room's endpoint); a message carrying a task id answers that task's
question. Waiting is on the caller's wake-ups, which the task's outcome reaches from any hub
process sharing the database, never on a timer."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any, NoReturn

from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    A2AError,
    InvalidParamsError,
    InvalidRequestError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from caucus.api.a2a import convert
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


def _by_status_time(task: Task) -> tuple[float, str]:
    return (task.updated_at, task.id)


def _cursor(task: Task) -> str:
    """An opaque page token: where the page ended, in the listing's order."""
    raw = json.dumps([task.updated_at, task.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _cursor_of(token: str) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        updated_at, task_id = json.loads(raw)
        if isinstance(updated_at, int | float) and isinstance(task_id, str):
            return (float(updated_at), task_id)
    except (ValueError, TypeError, binascii.Error):
        pass
    raise InvalidParamsError("pageToken is one a previous page's nextPageToken gave")


def _history_length(config: Any) -> int | None:
    if not config.HasField("history_length"):
        return None
    if config.history_length < 0:
        raise InvalidParamsError("historyLength is 0 or more (0: no history)")
    return int(config.history_length)


class Door(RequestHandler):
    """One per served app; `wait_max`, if set, bounds a blocking `SendMessage` (the task goes
    on: the caller reads it with `GetTask`, or streams)."""

    def __init__(self, hub: Hub, wait_max: float | None) -> None:
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
                if message.context_id and message.context_id != task.thread:
                    raise InvalidParamsError(
                        f"contextId {message.context_id!r} is not task {task.id}'s "
                        f"({task.thread!r}): send the task's own, or none"
                    )
                if not task.state.open:
                    raise UnsupportedOperationError(
                        f"task {task.id} is {task.state.a2a}: it takes no more messages; send "
                        "one without a task id for a new task"
                    )
                if task.state is TaskState.INPUT_REQUIRED:
                    try:  # only its sender answers it (by identity: the task service's rule)
                        return await tasks.reply(peer, task.id, text)
                    except Forbidden:
                        raise UnsupportedOperationError(
                            f"task {task.id} asks its sender, not you"
                        ) from None
                # Under way: more for its worker, on the task's thread (its sender only).
                return await tasks.follow_up(peer, task.id, text)
        meta = convert.metadata_of(message)
        to = context.state.get("caucus_to") or meta.get("to") or await self._front(peer)
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

    async def _front(self, caller: Peer) -> str:
        """Who a message to the room's own endpoint goes to when it names nobody: the room's
        front agent (`a2a_front`), else the one agent here besides the caller (ADR 0038)."""
        front = self._hub.settings.a2a_front
        if front:
            return front
        others = [v.name for v in await self._hub.registry.peers() if v.name != caller.name]
        if len(others) == 1:
            return others[0]
        raise InvalidParamsError(
            "this room has no front agent to take a message that names nobody: send to "
            "/a2a/<agent> (its card: /a2a/<agent>/.well-known/agent-card.json), or set "
            "metadata.to; the operator names a front with `caucus hub --a2a-front <agent>` "
            f"(agents here: {', '.join(others) or 'none yet'})"
        )

    async def on_message_send(
        self, params: pb.SendMessageRequest, context: ServerCallContext
    ) -> pb.Task | pb.Message:
        """A blocking send (the default) answers once the task ends or asks for input, as
        A2A 1.0 says, or at the operator's bound (`a2a_wait_max`) if one is set."""
        config = params.configuration
        history = _history_length(config)  # refused before anything is sent
        task = await self._submit(params, context)
        if not config.return_immediately and not convert.settled(task):
            clock = self._hub.clock
            until = None if self._wait_max is None else clock.monotonic() + self._wait_max
            async for changed in self._changes(_caller(context), task, until, _ended(context)):
                task = changed
        return convert.task_proto(task, history)

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
        told = len(task.history)
        async for changed in self._changes(peer, task, None, ended):
            # Every state it passed through since the last read, each in its turn: a task
            # claimed and done between two wake-ups still reports `working` first.
            for passed in convert.passed_states(changed, told):
                yield passed
            told = len(changed.history)
            made = convert.artifact_event(changed)
            if made is not None:
                yield made
            yield convert.status_event(changed)

    async def _changes(
        self, peer: Peer, task: Task, until: float | None, ended: asyncio.Future[None] | None
    ) -> AsyncIterator[Task]:
        """Each new state of `task` (`TaskService.follow`) until it settles (ends, or asks
        the caller for input), `until` passes, the caller is gone (`ended`: it left, was
        kicked or went offline) or the hub stops."""
        follow = self._hub.tasks.follow(
            peer, task.id, since=task, until=until, ended=() if ended is None else (ended,)
        )
        async with contextlib.aclosing(follow) as changes:
            with _in_a2a_terms(task_id=task.id):
                async for changed in changes:
                    yield changed
                    if convert.settled(changed):
                        return

    # --- reading and canceling ------------------------------------------------------------
    async def _task(self, task_id: str, context: ServerCallContext) -> Task:
        with _in_a2a_terms(task_id=task_id):
            return await self._hub.tasks.status(_caller(context), task_id)

    async def on_get_task(self, params: pb.GetTaskRequest, context: ServerCallContext) -> pb.Task:
        history = _history_length(params)
        task = await self._task(params.id, context)
        return convert.task_proto(task, history)

    async def on_list_tasks(
        self, params: pb.ListTasksRequest, context: ServerCallContext
    ) -> pb.ListTasksResponse:
        """The caller's tasks (to the endpoint's agent, on an agent's endpoint), the latest
        status change first, a page at a time."""
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
        total = len(found)
        size = params.page_size if params.HasField("page_size") else PAGE_DEFAULT
        if not 1 <= size <= PAGE_MAX:
            raise InvalidParamsError(f"pageSize is 1-{PAGE_MAX}")
        found.sort(key=_by_status_time, reverse=True)  # the latest status change first
        if params.page_token:
            cursor = _cursor_of(params.page_token)
            found = [t for t in found if _by_status_time(t) < cursor]
        page = found[:size]
        following = _cursor(page[-1]) if len(found) > size else ""
        history = _history_length(params)
        artifacts = params.include_artifacts if params.HasField("include_artifacts") else False
        made = [convert.task_proto(t, history) for t in page]
        if not artifacts:
            for task in made:
                del task.artifacts[:]
        return pb.ListTasksResponse(
            tasks=made, next_page_token=following, page_size=len(made), total_size=total
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
        raise UnsupportedOperationError(
            "this agent has no extended card (its card does not declare one): the public card "
            "is the whole card"
        )
