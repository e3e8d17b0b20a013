"""Tool calls a weak local model wrote into its text instead of the `tool_calls` field:
Hermes-style `<tool_call>{"name": …, "arguments": …}</tool_call>` tags (the closing tag may be
missing at the very end), or a fenced JSON block holding such an object (or a list of them).
Only calls that name a tool the run offered count; the rest of the text is kept."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from caucus.models.chat import ToolCall

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FENCED = re.compile(r"```(?:json|tool_call|tool)?[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)


def _as_call(obj: Any, known: set[str], new_id: Callable[[], str]) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    name = obj.get("name")
    if not isinstance(name, str) and isinstance(obj.get("function"), dict):
        return _as_call(obj["function"], known, new_id)
    if not isinstance(name, str) or name not in known:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    if not isinstance(args, dict):
        return None
    return ToolCall(new_id(), name, args)


def _calls(text: str, known: set[str], new_id: Callable[[], str]) -> list[ToolCall] | None:
    """The calls a JSON text holds, or None if it is not (only) calls to known tools."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    items = value if isinstance(value, list) else [value]
    calls = [_as_call(item, known, new_id) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def calls_in_text(
    content: str, known: set[str], new_id: Callable[[], str]
) -> tuple[str, list[ToolCall]]:
    """(the content without the calls, the calls) — no calls when none is found."""
    if not known or ("<tool_call>" not in content and "```" not in content):
        return content, []
    found: list[ToolCall] = []
    rest = content
    for pattern in (_HERMES, _FENCED):
        kept: list[str] = []
        last = 0
        for match in pattern.finditer(rest):
            calls = _calls(match.group(1), known, new_id)
            if calls is None:
                continue
            kept.append(rest[last : match.start()])
            last = match.end()
            found.extend(calls)
        if last:
            rest = "".join(kept) + rest[last:]
        if found:
            break  # one notation per answer
    return rest.strip(), found
