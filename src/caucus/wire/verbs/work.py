"""Rows of the verb table (`caucus.wire.verbs`): work."""

from __future__ import annotations

from caucus.wire import queries as q
from caucus.wire import requests as rq
from caucus.wire.verb import Verb
from caucus.wire.verbs.errors import AGENT, MALFORMED, OFFER, TASK, without
from caucus.wire.work import OfferInfo, OfferList, TaskInfo, TaskList

SEND_TASK = Verb(
    "send_task",
    "POST",
    "/tasks",
    TaskInfo,
    "Send a task to a peer: it receives it like any item, and receiving claims it",
    AGENT,
    "tasks",
    TASK,
    request=rq.TaskRequest,
    hot=True,
)


LIST_TASKS = Verb(
    "list_tasks",
    "GET",
    "/tasks",
    TaskList,
    "Tasks you sent or received, optionally in one state",
    AGENT,
    "tasks",
    MALFORMED,
    query=q.TasksQuery,
)


READY_TASKS = Verb(
    "ready_tasks",
    "GET",
    "/tasks/ready",
    TaskList,
    "What you can start now: your pending tasks nothing holds back, most urgent first",
    AGENT,
    "tasks",
    MALFORMED,
    query=q.ReadyQuery,
    service="tasks.ready",
)


TASK_STATUS = Verb(
    "task_status",
    "GET",
    "/tasks/{task_id}",
    TaskInfo,
    "A task's state and history (sender and worker only)",
    AGENT,
    "tasks",
    without(TASK, 403, 409),
    service="tasks.status",
)


BLOCKERS = Verb(
    "blockers",
    "GET",
    "/tasks/{task_id}/blockers",
    TaskList,
    "The tasks this one waits (or waited) on, with their states: those you may read",
    AGENT,
    "tasks",
    without(TASK, 403, 409),
    service="tasks.blockers",
)


REPLY_TASK = Verb(
    "reply_task",
    "POST",
    "/tasks/{task_id}/reply",
    TaskInfo,
    "The worker completes the task; the sender answers the worker's question",
    AGENT,
    "tasks",
    TASK,
    request=rq.TaskResultRequest,
    hot=True,
)
FAIL_TASK = Verb(
    "fail_task",
    "POST",
    "/tasks/{task_id}/fail",
    TaskInfo,
    "The worker gives the task up; the sender gets a failure item",
    AGENT,
    "tasks",
    TASK,
    request=rq.TaskErrorRequest,
    hot=True,
)
REQUEST_INPUT = Verb(
    "request_input",
    "POST",
    "/tasks/{task_id}/input",
    TaskInfo,
    "The worker asks the sender a question; the task waits for the answer",
    AGENT,
    "tasks",
    TASK,
    request=rq.TaskQuestionRequest,
    hot=True,
)
CANCEL_TASK = Verb(
    "cancel_task",
    "POST",
    "/tasks/{task_id}/cancel",
    TaskInfo,
    "The sender cancels the task; the worker is told",
    AGENT,
    "tasks",
    TASK,
    hot=True,
)


DEPEND = Verb(
    "depend",
    "POST",
    "/tasks/{task_id}/blocked_by",
    TaskInfo,
    "Make a task of yours that still waits wait on more tasks (never a cycle)",
    AGENT,
    "tasks",
    TASK,
    request=rq.DependRequest,
    service="tasks.depend",
)


POST_OFFER = Verb(
    "post_offer",
    "POST",
    "/offers",
    OfferInfo,
    "Post work for whoever can take it (announced; at most 5 open per poster)",
    AGENT,
    "job board",
    OFFER,
    request=rq.OfferRequest,
)


LIST_OFFERS = Verb(
    "list_offers",
    "GET",
    "/offers",
    OfferList,
    "Offers on the board, with their claims",
    AGENT,
    "job board",
    without(OFFER, 404, 409),
    query=q.OffersQuery,
)


CLAIM_OFFER = Verb(
    "claim_offer",
    "POST",
    "/offers/{offer_id}/claim",
    OfferInfo,
    "Claim an open offer (the poster is told)",
    AGENT,
    "job board",
    OFFER,
    request=rq.ClaimRequest,
    optional_body=True,
)


RESOLVE_OFFER = Verb(
    "resolve_offer",
    "POST",
    "/offers/{offer_id}/resolve",
    OfferInfo,
    "The poster selects a claimant (who gets the work as a task) or withdraws",
    AGENT,
    "job board",
    OFFER,
    request=rq.ResolveRequest,
)
