"""Taking the answer out of what a model wrote.

Models wrap their JSON in prose and code fences, think aloud in earlier drafts, and get cut off
mid-revision. The answer is the last complete top-level object; earlier malformed spans are
skipped (scanning resumes after them), but an object-shaped span that starts after the last
complete one and never parses is an unfinished revision, and taking the earlier draft would
record an answer the model had moved away from.
"""

from __future__ import annotations

import json
import re
from typing import Any


class Malformed(ValueError):
    """No usable object, or a revision left unfinished."""


# A span is a JSON attempt when its brace opens an object with a key or closes at once; a
# brace in prose ("use {name} here") is not one.
_OBJECT_START = re.compile(r"\{\s*(\"|\})")


def _span_end(text: str, start: int) -> int | None:
    """The index after the brace that closes the one at `start`, strings respected; None when
    the text ends first."""
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def last_object(text: str) -> dict[str, Any]:
    """The last complete top-level JSON object in `text`."""
    found: dict[str, Any] | None = None
    dangling: str | None = None
    i = 0
    while True:
        match = _OBJECT_START.search(text, i)
        if match is None:
            break
        start = match.start()
        end = _span_end(text, start)
        if end is None:
            dangling = "the answer ends inside an unfinished JSON object"
            break
        try:
            value = json.loads(text[start:end], parse_constant=_reject_constant)
        except ValueError as exc:
            dangling = f"a JSON object does not parse ({exc})"
        else:
            found, dangling = value, None
        i = end
    if dangling is not None and found is not None:
        raise Malformed(f"{dangling} after the last complete one (an unfinished revision)")
    if found is None:
        raise Malformed(dangling or "the answer holds no JSON object")
    return found
