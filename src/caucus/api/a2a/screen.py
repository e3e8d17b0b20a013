"""What the door answers before the A2A SDK's dispatcher sees a request, where the SDK would
answer otherwise than A2A 1.0 says (ADR 0038):

- a body that is not JSON (or not JSON the hub keeps: `web/body.py`) is `-32700` with
  `id: null`, not the hub's HTTP 400;
- a notification (a request without `id`) is not answered and does nothing: JSON-RPC says a
  server replies to none, and a `SendMessage` nobody can follow must not become a task;
- a 0.3 method name from a client that says `A2A-Version: 1.0` is `-32601` (that version has
  no such method), not the SDK's version error;
- what the SDK's parser lets through by design, being lenient (unknown fields ignored, unknown
  enum values read as 0): a Message without `messageId` or `role`, and a `ListTasks` status
  that is no state, are `-32602` naming the field.

Imports nothing of the SDK: the route calls it before the door is built, with the body as the
hub's `parse_json` read it (or the reason it could not).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PARSE_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND = -32700, -32602, -32601
VERSION_HEADER = "a2a-version"
# 0.3's JSON-RPC methods (the SDK's compatibility layer serves them to 0.3 clients).
LEGACY_METHODS = frozenset(
    {
        "message/send",
        "message/stream",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
        "agent/getAuthenticatedExtendedCard",
    }
)
SENDS = frozenset({"SendMessage", "SendStreamingMessage"})
ROLES = frozenset({"ROLE_USER", "ROLE_AGENT", 1, 2})
STATES = frozenset(
    {
        "TASK_STATE_UNSPECIFIED",  # no filter
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_AUTH_REQUIRED",
        *range(9),
    }
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """`method` to dispatch; or `answer`, the JSON-RPC error to send instead; or, for a
    notification, neither (`silent`)."""

    method: str | None = None
    answer: dict[str, Any] | None = None
    silent: bool = False


def unparsable(reason: str) -> Verdict:
    return Verdict(answer=_error(None, PARSE_ERROR, f"Parse error: {reason}"))


def screen(message: object, version: str | None) -> Verdict:
    if not isinstance(message, dict):
        return Verdict()  # a batch, a bare value: the SDK's -32600
    method = message.get("method")
    if not isinstance(method, str) or message.get("jsonrpc") != "2.0":
        return Verdict()  # not a request: the SDK's -32600
    if "id" not in message:
        return Verdict(silent=True)
    request_id = message["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        return Verdict()  # an id of the wrong type: the SDK's -32600
    if method in LEGACY_METHODS and version is not None and not version.startswith("0."):
        said = f"A2A {version} has no method {method!r} (a 0.3 name: send it without A2A-Version)"
        return Verdict(answer=_error(request_id, METHOD_NOT_FOUND, said))
    params = message.get("params")
    problem = _params_problem(method, params) if isinstance(params, dict) else None
    if problem is not None:
        return Verdict(answer=_error(request_id, INVALID_PARAMS, problem))
    return Verdict(method=method)


def _params_problem(method: str, params: dict[str, Any]) -> str | None:
    if method in SENDS:
        sent = params.get("message")
        if not isinstance(sent, dict):
            return "params.message is required"
        message_id = sent.get("messageId")
        if not isinstance(message_id, str) or not message_id:
            return "message.messageId is required: a unique id the client gives each message"
        if sent.get("role") not in ROLES:
            return "message.role is required: ROLE_USER or ROLE_AGENT"
    elif method == "ListTasks" and "status" in params and params["status"] not in STATES:
        return f"status {params['status']!r} is no task state; the states: " + ", ".join(
            sorted(s for s in STATES if isinstance(s, str))
        )
    return None


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
