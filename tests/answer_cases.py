"""What the answers walker asks of each route: its success and each answer the route itself
documents (404, 409, 423, ...), as `Case`s run in order against one room (`answer_world`).
The answers every route can give for the same reason (no token, a foreign Origin or Host,
malformed input, a spent budget, the storage) are walked for every route at once by the
walker itself and by tests/interaction/test_route_walker.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.answer_world import World

Prep = Callable[[World], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Case:
    op: str  # "METHOD /path/{param}"
    status: int
    role: str = "alice"
    path: dict[str, str] = field(default_factory=dict)
    body: Any = None
    params: dict[str, Any] | None = None
    prep: Prep | None = None  # what the case needs made fresh: path, body, params


def C(op: str, status: int, role: str = "alice", **kw: Any) -> Case:
    return Case(op, status, role, **kw)


def _task(state: str, body: Any = None) -> Prep:
    async def prep(w: World) -> dict[str, Any]:
        return {"path": {"task_id": await w.task(state)}, "body": body}

    return prep


async def _offer(w: World) -> dict[str, Any]:
    return {"path": {"offer_id": await w.offer()}, "body": {}}


async def _claimed(w: World) -> dict[str, Any]:
    return {"path": {"offer_id": await w.claimed_offer()}, "body": {"select": "bob"}}


def _form(body: Any) -> Prep:
    async def prep(w: World) -> dict[str, Any]:
        return {"path": {"form_id": await w.form()}, "body": body}

    return prep


def _answered(body: Any) -> Prep:
    async def prep(w: World) -> dict[str, Any]:
        return {"path": {"form_id": await w.answered_form()}, "body": body}

    return prep


ANSWER = {"answers": {"go": "yes"}}


async def _waiting(w: World) -> dict[str, Any]:
    """A task that waits on another."""
    return {"path": {"task_id": (await _blocked(w))["path"]["task_id"]}}


async def _deliberation(w: World) -> dict[str, Any]:
    return {"path": {"deliberation_id": await w.deliberation()}}


async def _blocked(w: World) -> dict[str, Any]:
    first = await w.task("pending")
    made = await w.ok(
        "alice", "POST", "/tasks", body={"to": "bob", "content": "after", "blocked_by": [first]}
    )
    more = await w.task("pending")
    return {"path": {"task_id": made["task_id"]}, "body": {"blocked_by": [more]}}


async def _panel(w: World) -> dict[str, Any]:
    position = {"stance": "approve", "summary": "it holds", "confidence": 0.8}
    return {"path": {"deliberation_id": await w.deliberation()}, "body": position}


async def _launched(w: World) -> dict[str, Any]:
    return {"path": {"launch_id": await w.launched()}}


async def _spawned(w: World) -> dict[str, Any]:
    return {"path": {"spawn_id": await w.spawned()}}


async def _granted(w: World) -> dict[str, Any]:
    await w.grant()
    return {"body": {"prompt": "You echo.", "profile": "echo", "name": w.fresh("mate")}}


async def _agent(w: World) -> dict[str, Any]:
    return {"path": {"name": await w.agent()}}


async def _held(w: World) -> dict[str, Any]:
    await w.reservation("carol", "lib/held.py")
    return {"body": {"paths": ["lib/held.py"], "exclusive": True, "ttl": 600}}


async def _floor_held(w: World) -> dict[str, Any]:
    await w.ok("carol", "POST", "/channels/join", body={"channel": "#dev"})
    await w.ok("carol", "POST", "/floor", body={"action": "take", "scope": "#dev"})
    return {"body": {"to": "#dev", "content": "may I?"}}


def _channel(body: Any) -> Prep:
    async def prep(w: World) -> dict[str, Any]:
        name = w.fresh("#room")
        await w.ok("carol", "POST", "/channels/join", body={"channel": name})
        return {"path": {"channel": name.lstrip("#")}, "body": body}

    return prep


async def _closed_channel(w: World) -> dict[str, Any]:
    found = await _channel(None)(w)
    await w.ok("operator", "POST", f"/operator/channels/{found['path']['channel']}/close")
    return found


async def _after_failed(w: World) -> dict[str, Any]:
    failed = await w.task("in_progress")
    await w.ok("bob", "POST", f"/tasks/{failed}/fail", body={"error": "no"})
    return {"body": {"to": "bob", "content": "after it", "blocked_by": [failed]}}


async def _sent_on(w: World) -> dict[str, Any]:
    """A task already sent to its worker cannot be made to wait."""
    return {"path": {"task_id": await w.task("pending")}, "body": {"blocked_by": [await w.task()]}}


async def _claimed_again(w: World) -> dict[str, Any]:
    return {"path": {"offer_id": await w.claimed_offer()}, "body": {}}


async def _answered_panel(w: World) -> dict[str, Any]:
    found = await _panel(w)
    path = f"/deliberations/{found['path']['deliberation_id']}/position"
    await w.ok("bob", "POST", path, body=found["body"])
    return found


async def _offer_after_failed(w: World) -> dict[str, Any]:
    found = await _after_failed(w)
    return {"body": {"content": "later", "blocked_by": found["body"]["blocked_by"]}}


async def _resolved(w: World) -> dict[str, Any]:
    offer_id = await w.claimed_offer()
    await w.ok("alice", "POST", f"/offers/{offer_id}/resolve", body={"select": "bob"})
    return {"path": {"offer_id": offer_id}, "body": {"withdraw": True}}


async def _thread(w: World) -> dict[str, Any]:
    thread = w.fresh("plan")
    body = {"to": "bob", "content": "a thread", "thread": thread}
    await w.ok("alice", "POST", "/send", body=body)
    return {"path": {"thread": thread}}


async def _ticket(w: World) -> dict[str, Any]:
    ticket = await w.ok("alice", "POST", "/watch/tickets")
    return {"body": {"ticket": ticket["ticket"]}}


TASK = "/tasks/{task_id}"
FORM = "/operator/forms/{form_id}"
PEER = "/operator/peers/{name}"
CHANNEL = "/operator/channels/{channel}"
NOWHERE = {"task_id": "t_nowhere"}

CASES: list[Case] = [
    # --- identities and messages
    C("POST /register", 200, "none", body={"name": "dora"}),
    C("POST /register", 409, "none", body={"name": "alice"}),
    C("POST /register", 401, "none", body={"name": "alice", "token": "cau_unknown0123456789"}),
    C("POST /status", 200, body={"status": "reading"}),
    C("GET /peers", 200),
    C("GET /ping", 200, params={"peer": "bob"}),
    C("GET /ping", 404, params={"peer": "nobody"}),
    C("POST /send", 200, body={"to": "bob", "content": "hi"}),
    C("POST /send", 404, body={"to": "nobody", "content": "hi"}),
    C("POST /send", 423, prep=_floor_held),
    C("GET /receive", 200, "bob", params={"timeout": 0}),
    C("POST /ack", 200, "bob", body={"through": 1}),
    C("GET /peek", 200, "bob"),
    C("POST /announce", 200, body={"content": "a release is out", "subject": "release"}),
    C("POST /watch/keys", 200),
    C("POST /watch/tickets", 200),
    C("POST /watch/redeem", 200, "none", prep=_ticket),
    C("POST /watch/redeem", 401, "none", body={"ticket": "wt_unknown0123456789"}),
    C("GET /watch", 200, "watcher", params={"timeout": 0}),
    C("POST /watch/ack", 200, "watcher", body={"through": 1}),
    C("POST /channels/join", 200, body={"channel": "#ops"}),
    C("POST /channels/topic", 200, body={"channel": "#ops", "topic": "on call"}),
    C("POST /channels/topic", 404, body={"channel": "#nowhere", "topic": "x"}),
    C("POST /channels/leave", 200, body={"channel": "#ops"}),
    C("POST /channels/join", 409, "carol", body={"channel": "#ops", "private": True}),
    C("POST /channels/leave", 404, body={"channel": "#nowhere"}),
    C("GET /channels", 200),
    C("POST /floor", 200, body={"action": "raise", "scope": "all"}),
    C("GET /floors", 200),
    C("POST /operator/floors/{scope}/clear", 200, "operator", path={"scope": "dev"}),
    C("POST /operator/floors/{scope}/clear", 404, "operator", path={"scope": "nowhere"}),
    C("POST /activity", 200, body={"tool": "shell", "ok": True, "ms": 5}),
    C("GET /operator/activity", 200, "observer"),
    # --- forms and decisions
    C("POST /forms", 200, body={"title": "ok?", "fields": [{"key": "go", "type": "text"}]}),
    C("GET /forms", 200),
    C("POST /forms/{form_id}/cancel", 200, prep=_form({})),
    C("POST /forms/{form_id}/cancel", 404, path={"form_id": "f_nowhere"}, body={}),
    C("POST /forms/{form_id}/cancel", 409, prep=_answered({})),
    C("GET /decisions", 200),
    C("GET /operator/forms", 200, "observer"),
    C(f"GET {FORM}", 200, "observer", prep=_form(None)),
    C(f"GET {FORM}", 404, "observer", path={"form_id": "f_nowhere"}),
    C(f"POST {FORM}/answer", 200, "operator", prep=_form(ANSWER)),
    C(f"POST {FORM}/answer", 404, "operator", path={"form_id": "f_nowhere"}, body={"answers": {}}),
    C(f"POST {FORM}/answer", 409, "operator", prep=_answered(ANSWER)),
    C(f"POST {FORM}/cancel", 200, "operator", prep=_form({})),
    C(f"POST {FORM}/cancel", 404, "operator", path={"form_id": "f_nowhere"}, body={}),
    C(f"POST {FORM}/cancel", 409, "operator", prep=_answered({})),
    C("GET /operator/decisions", 200, "observer"),
    C("GET /operator/ledger", 200, "observer"),
    # --- tasks
    C("POST /tasks", 200, body={"to": "bob", "content": "build it"}),
    C("POST /tasks", 404, body={"to": "nobody", "content": "build it"}),
    C("POST /tasks", 404, body={"to": "bob", "content": "x", "blocked_by": ["t_nowhere"]}),
    C("POST /tasks", 409, prep=_after_failed),
    C("GET /tasks", 200, params={"role": "sent"}),
    C("GET /tasks/ready", 200, "bob"),
    C(f"GET {TASK}/blockers", 200, prep=_waiting),
    C(f"GET {TASK}/blockers", 404, path=NOWHERE),
    C(f"GET {TASK}", 200, prep=_task("pending")),
    C(f"GET {TASK}", 404, path=NOWHERE),
    C(f"POST {TASK}/reply", 200, "bob", prep=_task("in_progress", {"result": "done"})),
    C(f"POST {TASK}/fail", 403, "alice", prep=_task("in_progress", {"error": "no"})),
    C(f"POST {TASK}/reply", 404, "bob", path=NOWHERE, body={"result": "done"}),
    C(f"POST {TASK}/reply", 409, "bob", prep=_task("completed", {"result": "again"})),
    C(f"POST {TASK}/fail", 200, "bob", prep=_task("in_progress", {"error": "no"})),
    C(f"POST {TASK}/fail", 404, "bob", path=NOWHERE, body={"error": "no"}),
    C(f"POST {TASK}/fail", 409, "bob", prep=_task("completed", {"error": "no"})),
    C(f"POST {TASK}/input", 200, "bob", prep=_task("in_progress", {"question": "which?"})),
    C(f"POST {TASK}/input", 404, "bob", path=NOWHERE, body={"question": "which?"}),
    C(f"POST {TASK}/input", 409, "bob", prep=_task("completed", {"question": "which?"})),
    C(f"POST {TASK}/cancel", 200, prep=_task("pending")),
    C(f"POST {TASK}/cancel", 404, path=NOWHERE),
    C(f"POST {TASK}/cancel", 409, prep=_task("completed")),
    C(f"POST {TASK}/blocked_by", 200, prep=_blocked),
    C(f"POST {TASK}/blocked_by", 409, prep=_sent_on),
    C(f"POST {TASK}/blocked_by", 404, path=NOWHERE, body={"blocked_by": ["t_nowhere"]}),
    # --- the job board
    C("POST /offers", 200, body={"content": "a job"}),
    C("POST /offers", 404, body={"content": "later", "blocked_by": ["t_nowhere"]}),
    C("POST /offers", 409, prep=_offer_after_failed),
    C("GET /offers", 200),
    C("POST /offers/{offer_id}/claim", 200, "bob", prep=_offer),
    C("POST /offers/{offer_id}/claim", 409, "bob", prep=_claimed_again),
    C("POST /offers/{offer_id}/claim", 404, "bob", path={"offer_id": "o_nowhere"}, body={}),
    C("POST /offers/{offer_id}/resolve", 200, prep=_claimed),
    C("POST /offers/{offer_id}/resolve", 404, path={"offer_id": "o_x"}, body={"withdraw": True}),
    C("POST /offers/{offer_id}/resolve", 409, prep=_resolved),
    # --- reservations
    C("POST /reservations", 200, body={"paths": ["src/one.py"], "ttl": 600}),
    C("POST /operator/reservations/policy", 200, "operator", body={"policy": "enforce"}),
    C("POST /reservations", 409, prep=_held),
    C("GET /reservations", 200),
    C("POST /reservations/renew", 200, body={"ttl": 600}),
    C("POST /reservations/release", 200, body={"all": True}),
    C("POST /reservations/blocked", 200, body={"paths": ["lib/held.py"]}),
    # --- search and threads
    C("GET /search", 200, params={"q": "hello"}),
    C("GET /threads/{thread}/summary", 200, prep=_thread),
    C("GET /threads/{thread}/summary", 404, path={"thread": "nowhere"}),
    C("GET /operator/search", 200, "observer", params={"q": "hello"}),
    C("GET /operator/threads/{thread}/summary", 200, "observer", prep=_thread),
    C("GET /operator/threads/{thread}/summary", 404, "observer", path={"thread": "nowhere"}),
    # --- teammates
    C("GET /teammates", 200),
    C("POST /teammates", 201, prep=_granted),
    C("POST /teammates", 409, body={"prompt": "You echo.", "profile": "echo", "name": "bob"}),
    C("POST /teammates/{spawn_id}/stop", 200, prep=_spawned),
    C("POST /teammates/{spawn_id}/stop", 404, path={"spawn_id": "sp_nowhere"}),
    C("GET /operator/teammates", 200, "observer"),
    C(f"PUT {PEER}/spawn-grant", 200, "operator", path={"name": "carol"}, body={"teammates": 1}),
    C(f"PUT {PEER}/spawn-grant", 404, "operator", path={"name": "nobody"}, body={}),
    C(f"DELETE {PEER}/spawn-grant", 204, "operator", path={"name": "carol"}),
    C(f"DELETE {PEER}/spawn-grant", 404, "operator", path={"name": "nobody"}),
    C("POST /operator/teammates/{spawn_id}/stop", 200, "operator", prep=_spawned),
    C("POST /operator/teammates/{spawn_id}/stop", 404, "operator", path={"spawn_id": "sp_x"}),
    # --- launched agents
    C("GET /operator/agents", 200, "operator"),
    C("POST /operator/agents", 201, "operator", body={"name": "runner", "backend": "mock"}),
    C("POST /operator/agents", 409, "operator", body={"name": "runner", "backend": "mock"}),
    C("GET /operator/agents/{launch_id}", 200, "operator", prep=_launched),
    C("GET /operator/agents/{launch_id}", 404, "operator", path={"launch_id": "agent-0"}),
    C("GET /operator/agents/{launch_id}/output", 200, "operator", prep=_launched),
    C("GET /operator/agents/{launch_id}/output", 404, "operator", path={"launch_id": "agent-0"}),
    C("POST /operator/agents/{launch_id}/stop", 200, "operator", prep=_launched),
    C("POST /operator/agents/{launch_id}/stop", 404, "operator", path={"launch_id": "agent-0"}),
    # --- deliberations
    C("GET /deliberations", 200),
    C("POST /deliberations", 200, body={"subject": "Adopt?", "panel": ["bob"]}),
    C("POST /deliberations", 404, body={"subject": "Adopt?", "panel": ["nobody"]}),
    C("GET /deliberations/{deliberation_id}", 200, prep=_deliberation),
    C("GET /deliberations/{deliberation_id}", 404, path={"deliberation_id": "d_nowhere"}),
    C("POST /deliberations/{deliberation_id}/position", 200, "bob", prep=_panel),
    C("POST /deliberations/{deliberation_id}/position", 409, "bob", prep=_answered_panel),
    C(
        "POST /deliberations/{deliberation_id}/position",
        404,
        "bob",
        path={"deliberation_id": "d_nowhere"},
        body={"stance": "approve", "summary": "x", "confidence": 0.5},
    ),
    C("GET /operator/deliberations", 200, "observer"),
    # --- the operator
    C("GET /operator/state", 200, "observer"),
    C("POST /operator/say", 200, "operator", body={"to": "bob", "content": "note"}),
    C("POST /operator/say", 404, "operator", body={"to": "nobody", "content": "note"}),
    C("POST /operator/announce", 200, "operator", body={"content": "maintenance at six"}),
    C("POST /operator/rate", 200, "operator", body={"capacity": 1000, "refill": 1000}),
    C(f"POST {PEER}/pause", 200, "operator", path={"name": "carol"}),
    C(f"POST {PEER}/resume", 200, "operator", path={"name": "carol"}),
    C(f"POST {PEER}/interrupt", 200, "operator", path={"name": "carol"}, body={}),
    C(f"POST {PEER}/reset", 200, "operator", path={"name": "carol"}, body={}),
    C(f"POST {PEER}/stop", 200, "operator", path={"name": "carol"}, body={}),
    C(f"GET {PEER}/ping", 200, "observer", path={"name": "carol"}),
    C(f"POST {PEER}/kick", 200, "operator", prep=_agent),
    *[
        C(f"{method} {PEER}/{verb}", 404, role, path={"name": "nobody"}, body=body)
        for method, verb, role, body in (
            ("POST", "pause", "operator", None),
            ("POST", "resume", "operator", None),
            ("POST", "interrupt", "operator", {}),
            ("POST", "reset", "operator", {}),
            ("POST", "stop", "operator", {}),
            ("POST", "kick", "operator", None),
            ("GET", "ping", "observer", None),
        )
    ],
    C(f"POST {CHANNEL}/private", 200, "operator", prep=_channel({"private": True})),
    C(f"POST {CHANNEL}/invite", 200, "operator", prep=_channel({"peer": "bob"})),
    C(f"POST {CHANNEL}/remove", 200, "operator", prep=_channel({"peer": "carol"})),
    C(f"POST {CHANNEL}/close", 200, "operator", prep=_channel(None)),
    C(f"POST {CHANNEL}/reopen", 200, "operator", prep=_closed_channel),
    *[
        C(f"POST {CHANNEL}/{verb}", 404, "operator", path={"channel": "nowhere"}, body=body)
        for verb, body in (
            ("private", {"private": True}),
            ("invite", {"peer": "bob"}),
            ("remove", {"peer": "bob"}),
            ("close", None),
            ("reopen", None),
        )
    ],
    C("POST /operator/purge", 200, "operator", body={"dry_run": True}),
    C("GET /operator/snapshot", 200, "observer"),
    C("GET /operator/events", 200, "observer"),
    C("GET /operator/session", 200, "observer"),
    C("GET /operator/messages", 200, "observer"),
    C("GET /operator/tasks", 200, "observer"),
    C("GET /operator/offers", 200, "observer"),
    C("GET /operator/upkeep", 200, "observer"),
    C("GET /export", 200, "observer"),
    C("GET /messages/export", 200),
    # --- protocol, health, the console, A2A
    C("GET /protocol", 200, "none"),
    C("GET /protocol", 404, "none", params={"section": "nowhere"}),
    C("GET /limits", 200, "none"),
    C("GET /health", 200, "none"),
    C("GET /version", 200, "none"),
    C("GET /", 200, "none"),
    C("GET /console/{asset}", 200, "none", path={"asset": "app.js"}),
    C("GET /console/{asset}", 404, "none", path={"asset": "nowhere.js"}),
    C("GET /.well-known/agent-card.json", 200),
    C("GET /a2a/.well-known/agent-card.json", 200),
    C("GET /a2a/{name}/.well-known/agent-card.json", 200, path={"name": "bob"}),
    C("GET /a2a/{name}/.well-known/agent-card.json", 404, path={"name": "nobody"}),
    C("POST /a2a", 200, body={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}),
    C("POST /a2a/{name}", 200, path={"name": "bob"}, body={"jsonrpc": "2.0", "id": 1}),
    C("POST /a2a/{name}", 404, path={"name": "nobody"}, body={"jsonrpc": "2.0", "id": 1}),
    # --- the room, last: these end it for everyone
    C("POST /operator/pause", 200, "operator"),
    C("POST /operator/resume", 200, "operator"),
    C("POST /operator/reset", 200, "operator", body={}),
    C("POST /offline", 200, "carol"),
    C("POST /leave", 200, "carol"),
    C("POST /operator/stop", 200, "operator", body={}),
]
