"""Rows of the verb table (`caucus.wire.verbs`): what the operator and the observer read, and
the agents and teammates the operator runs."""

from __future__ import annotations

from typing import Any

from caucus.domain.control import Access
from caucus.wire import queries as q
from caucus.wire import requests as rq
from caucus.wire.activity import ActivityList
from caucus.wire.console import SnapshotAt
from caucus.wire.deliberations import DeliberationList
from caucus.wire.forms import DecisionList, FormInfo, FormList, LedgerStatusInfo
from caucus.wire.launcher import AgentOutput, LaunchedAgent, LaunchedList
from caucus.wire.messages import History
from caucus.wire.room import SessionInfo
from caucus.wire.search import SearchResults, ThreadSummaryInfo
from caucus.wire.spawns import SpawnGrantInfo, TeammateInfo, TeammatesOverview
from caucus.wire.upkeep import UpkeepInfo
from caucus.wire.verb import Verb
from caucus.wire.verbs.errors import FORM, PANEL
from caucus.wire.work import OfferList, TaskList

LAUNCHER_OFF = (
    "an agent or observer token, or `launcher_disabled`: the hub binds an address other "
    "machines reach"
)


# The errors several of these verbs document alike.
LAUNCHED = {
    401: "missing or unknown token",
    403: LAUNCHER_OFF,
    404: "no such launched agent",
    422: "a bad name, workdir or backend setting",
}
SETTLED_FORM = {
    401: "missing, unknown or ended token",
    403: "not a member of the channel, or not the operator",
    404: "no such form",
    409: "the form was already answered or canceled",
    422: "a field or answer that does not fit the form",
    429: "cap_open_forms: too many of your forms pending",
}
TEAMMATE_GRANTS = {
    401: "missing, unknown or ended token",
    403: "not the operator (or, to read, an observer)",
    404: "no such agent here, or no such teammate",
    422: "teammates out of 1-16",
}
VIEWER_FILTER = {401: "missing or unknown token", 403: "an agent token", 422: "a bad filter"}


OPERATOR_ACTIVITY = Verb(
    "operator_activity",
    "GET",
    "/operator/activity",
    ActivityList,
    "MCP tool calls, newest first: tool, caller, outcome, error, duration",
    Access.VIEWER,
    "activity",
    {401: "missing or unknown token", 403: "a token of the wrong kind"},
    query=q.ActivityQuery,
)


LAUNCH_AGENT = Verb(
    "launch_agent",
    "POST",
    "/operator/agents",
    LaunchedAgent,
    "Start a native agent (`caucus agent`) on this machine; it joins the room",
    Access.OPERATOR,
    "operator",
    {
        401: "missing or unknown token",
        403: LAUNCHER_OFF,
        409: "one by that name is running, or too many are",
        422: "a bad name, workdir or backend setting",
    },
    request=rq.LaunchRequest,
    status=201,
)


LAUNCHED_AGENTS = Verb(
    "launched_agents",
    "GET",
    "/operator/agents",
    LaunchedList,
    "Agents launched from this hub process, newest first, and whether it launches any",
    Access.OPERATOR,
    "operator",
    {
        401: "missing or unknown token",
        403: LAUNCHER_OFF,
        422: "a bad name, workdir or backend setting",
    },
)


LAUNCHED_AGENT = Verb(
    "launched_agent",
    "GET",
    "/operator/agents/{launch_id}",
    LaunchedAgent,
    "One launched agent: its process, and whether it joined and spoke",
    Access.OPERATOR,
    "operator",
    LAUNCHED,
)


AGENT_OUTPUT = Verb(
    "agent_output",
    "GET",
    "/operator/agents/{launch_id}/output",
    AgentOutput,
    "What the agent printed (the last lines kept), after line `after`",
    Access.OPERATOR,
    "operator",
    LAUNCHED,
    query=q.OutputQuery,
)


STOP_AGENT = Verb(
    "stop_agent",
    "POST",
    "/operator/agents/{launch_id}/stop",
    LaunchedAgent,
    "Stop the agent (SIGTERM to its process group, SIGKILL after 5 s); returns once ended",
    Access.OPERATOR,
    "operator",
    LAUNCHED,
)


OPERATOR_FORMS = Verb(
    "operator_forms",
    "GET",
    "/operator/forms",
    FormList,
    "Forms by state: pending (the default, oldest first), answered, canceled or all",
    Access.VIEWER,
    "forms",
    FORM,
    query=q.FormsQuery,
)


OPERATOR_FORM = Verb(
    "operator_form",
    "GET",
    "/operator/forms/{form_id}",
    FormInfo,
    "One form, in any state",
    Access.VIEWER,
    "forms",
    {
        401: "missing, unknown or ended token",
        403: "not a member of the channel, or not the operator",
        404: "no such form",
        422: "a field or answer that does not fit the form",
        429: "cap_open_forms: too many of your forms pending",
    },
)


ANSWER_FORM = Verb(
    "answer_form",
    "POST",
    "/operator/forms/{form_id}/answer",
    FormInfo,
    "Answer a pending form: delivered to its audience and asker, and recorded",
    Access.OPERATOR,
    "forms",
    SETTLED_FORM,
    request=rq.AnswerRequest,
)


CANCEL_FORM = Verb(
    "cancel_form",
    "POST",
    "/operator/forms/{form_id}/cancel",
    FormInfo,
    "Cancel a pending form; the asker is told (with the reason, if given)",
    Access.OPERATOR,
    "forms",
    SETTLED_FORM,
    request=rq.ReasonRequest,
    optional_body=True,
)


OPERATOR_DECISIONS = Verb(
    "operator_decisions",
    "GET",
    "/operator/decisions",
    DecisionList,
    "Every decision on the ledger, newest first",
    Access.VIEWER,
    "forms",
    FORM,
    query=q.DecisionsQuery,
)


LEDGER = Verb(
    "ledger",
    "GET",
    "/operator/ledger",
    LedgerStatusInfo,
    "Whether the decision ledger verifies now",
    Access.VIEWER,
    "forms",
    FORM,
)


OPERATOR_SEARCH = Verb(
    "operator_search",
    "GET",
    "/operator/search",
    SearchResults,
    "Full-text search over every message and decision of the room",
    Access.VIEWER,
    "search",
    {
        401: "missing, unknown or ended token",
        422: "no words to search for, or a bad filter",
        429: "this identity's search budget is spent",
        503: "the search ran past its time budget",
        403: "an agent token",
    },
    query=q.SearchQuery,
)


OPERATOR_THREAD_SUMMARY = Verb(
    "operator_thread_summary",
    "GET",
    "/operator/threads/{thread}/summary",
    ThreadSummaryInfo,
    "A thread's summary from all of its messages",
    Access.VIEWER,
    "search",
    {
        401: "missing, unknown or ended token",
        422: "no words to search for, or a bad filter",
        429: "this identity's search budget is spent",
        503: "the search ran past its time budget",
        403: "an agent token",
        404: "no such thread, or none of it is yours to read",
    },
    query=q.SummaryQuery,
)


OPERATOR_DELIBERATIONS = Verb(
    "operator_deliberations",
    "GET",
    "/operator/deliberations",
    DeliberationList,
    "Every deliberation this hub process runs or ran, newest first",
    Access.VIEWER,
    "deliberations",
    PANEL,
)


OPERATOR_TEAMMATES = Verb(
    "operator_teammates",
    "GET",
    "/operator/teammates",
    TeammatesOverview,
    "The room's spawn grants and spawned teammates (newest first)",
    Access.VIEWER,
    "operator",
    {
        401: "missing, unknown or ended token",
        403: "not the operator (or, to read, an observer)",
        422: "teammates out of 1-16",
    },
)


GRANT_SPAWN = Verb(
    "grant_spawn",
    "PUT",
    "/operator/peers/{name}/spawn-grant",
    SpawnGrantInfo,
    "Let an agent spawn teammates, this many running at once (never given by default)",
    Access.OPERATOR,
    "operator",
    TEAMMATE_GRANTS,
    request=rq.SpawnGrantRequest,
)


REVOKE_SPAWN: Verb[Any] = Verb(
    "revoke_spawn",
    "DELETE",
    "/operator/peers/{name}/spawn-grant",
    None,
    "Take an agent's spawn grant back (its teammates running go on until stopped)",
    Access.OPERATOR,
    "operator",
    TEAMMATE_GRANTS,
    status=204,
)


STOP_ANY_TEAMMATE = Verb(
    "stop_any_teammate",
    "POST",
    "/operator/teammates/{spawn_id}/stop",
    TeammateInfo,
    "Stop a spawned teammate, whichever hub process runs it",
    Access.OPERATOR,
    "operator",
    TEAMMATE_GRANTS,
)


SNAPSHOT = Verb(
    "snapshot",
    "GET",
    "/operator/snapshot",
    SnapshotAt,
    "What the live feed starts with, as one JSON document",
    Access.VIEWER,
    "operator",
    {401: "missing or unknown token", 403: "an agent token"},
)


SESSION = Verb(
    "session",
    "GET",
    "/operator/session",
    SessionInfo,
    "Who this token is: the operator, or the read-only observer",
    Access.VIEWER,
    "operator",
    VIEWER_FILTER,
)


HISTORY = Verb(
    "history",
    "GET",
    "/operator/messages",
    History,
    "Routed messages before a seq, newest last, filtered by peer, channel, kind or text",
    Access.VIEWER,
    "operator",
    {
        401: "missing or unknown token",
        403: "an agent token",
        422: "a bad filter",
        503: "a text filter ran past its time budget",
    },
    query=q.HistoryQuery,
)


ALL_TASKS = Verb(
    "all_tasks",
    "GET",
    "/operator/tasks",
    TaskList,
    "Every peer's tasks, most recently changed first",
    Access.VIEWER,
    "operator",
    VIEWER_FILTER,
    query=q.AllTasksQuery,
)


ALL_OFFERS = Verb(
    "all_offers",
    "GET",
    "/operator/offers",
    OfferList,
    "The job board: every offer (optionally in one state) with its claims",
    Access.VIEWER,
    "operator",
    VIEWER_FILTER,
    query=q.AllOffersQuery,
)


UPKEEP = Verb(
    "upkeep",
    "GET",
    "/operator/upkeep",
    UpkeepInfo,
    "What housekeeping costs: how late the event loop ran (its recent stalls), the store's size",
    Access.VIEWER,
    "operator",
    {401: "missing or unknown token", 403: "an agent token"},
)
