"""JSON without recursion, for records nested deeper than the C parser and encoder will go.

The spec asks for deeply nested JSON to be checked without recursion limits. The standard
library's scanner and encoder recurse (and raise RecursionError past about a thousand levels),
so these are the fallbacks: they produce exactly what `json.loads` (with the verifier's hooks)
and `json.dumps(sort_keys=True, separators=(",", ":"))` would, with an explicit stack. They are
slower, and only used when the fast path gives up.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.encoder import encode_basestring_ascii
from typing import Any

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# The standard library scanner's number grammar (json.scanner.NUMBER_RE).
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS: tuple[tuple[str, Any], ...] = (("null", None), ("true", True), ("false", False))
_CONSTANTS = ("NaN", "Infinity", "-Infinity")


class Hooks:
    """What `json.JSONDecoder` would call: the verifier's duplicate-key and number checks."""

    def __init__(
        self,
        pairs: Callable[[list[tuple[str, Any]]], Any],
        parse_float: Callable[[str], Any],
        parse_int: Callable[[str], Any],
        parse_constant: Callable[[str], Any],
    ) -> None:
        self.pairs = pairs
        self.parse_float = parse_float
        self.parse_int = parse_int
        self.parse_constant = parse_constant


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _key(text: str, pos: int) -> tuple[str, int]:
    """A member name and its colon; returns the position of the value."""
    if text[pos : pos + 1] != '"':
        raise ValueError(f"expecting a property name at {pos}")
    key, pos = scanstring(text, pos + 1, True)
    pos = _skip(text, pos)
    if text[pos : pos + 1] != ":":
        raise ValueError(f"expecting ':' at {pos}")
    return key, _skip(text, pos + 1)


def _scalar(text: str, pos: int, hooks: Hooks) -> tuple[Any, int]:
    char = text[pos : pos + 1]
    if char == '"':
        value, end = scanstring(text, pos + 1, True)
        return value, end
    for word, literal in _LITERALS:
        if text.startswith(word, pos):
            return literal, pos + len(word)
    for word in _CONSTANTS:
        if text.startswith(word, pos):
            return hooks.parse_constant(word), pos + len(word)
    match = _NUMBER.match(text, pos)
    if match is None:
        raise ValueError(f"expecting a value at {pos}")
    whole, fraction, exponent = match.groups()
    if fraction or exponent:
        return hooks.parse_float(whole + (fraction or "") + (exponent or "")), match.end()
    return hooks.parse_int(whole), match.end()


def loads(text: str, hooks: Hooks) -> Any:
    """Parse `text` as `json.JSONDecoder(object_pairs_hook=..., parse_*=...)` would."""
    # Each open container: a list of members (objects, with the key being read) or items.
    stack: list[tuple[list[Any], list[str] | None]] = []
    pos = _skip(text, 0)
    while True:
        char = text[pos : pos + 1]
        if char == "{":
            pos = _skip(text, pos + 1)
            if text[pos : pos + 1] == "}":
                value, pos = hooks.pairs([]), pos + 1
            else:
                key, pos = _key(text, pos)
                stack.append(([], [key]))
                continue
        elif char == "[":
            pos = _skip(text, pos + 1)
            if text[pos : pos + 1] == "]":
                value, pos = [], pos + 1
            else:
                stack.append(([], None))
                continue
        else:
            value, pos = _scalar(text, pos, hooks)
        # A value is complete: add it to its container, closing every container it completes.
        while True:
            if not stack:
                pos = _skip(text, pos)
                if pos != len(text):
                    raise ValueError(f"extra data at {pos}")
                return value
            members, slot = stack[-1]
            members.append((slot[0], value) if slot is not None else value)
            pos = _skip(text, pos)
            char = text[pos : pos + 1]
            if char == ",":
                pos = _skip(text, pos + 1)
                if slot is not None:
                    slot[0], pos = _key(text, pos)
                break
            if char == ("}" if slot is not None else "]"):
                stack.pop()
                value, pos = (hooks.pairs(members) if slot is not None else members), pos + 1
                continue
            raise ValueError(f"expecting ',' or a closing bracket at {pos}")


def dumps(value: Any) -> str:
    """`json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)`."""
    parts: list[str] = []
    # (True, text to emit) or (False, value to encode), popped from the end.
    work: list[tuple[bool, Any]] = [(False, value)]
    while work:
        raw, item = work.pop()
        if raw:
            parts.append(item)
        elif isinstance(item, str):
            parts.append(encode_basestring_ascii(item))
        elif item is None:
            parts.append("null")
        elif item is True:
            parts.append("true")
        elif item is False:
            parts.append("false")
        elif isinstance(item, int):
            parts.append(int.__repr__(item))
        elif isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                raise ValueError("out of range float values are not JSON compliant")
            parts.append(float.__repr__(item))
        elif isinstance(item, dict):
            entries = sorted(item.items())
            work.append((True, "}"))
            for index in range(len(entries) - 1, -1, -1):
                key, member = entries[index]
                if not isinstance(key, str):
                    raise TypeError(f"keys must be str, not {type(key).__name__}")
                work.append((False, member))
                work.append((True, ("," if index else "") + encode_basestring_ascii(key) + ":"))
            parts.append("{")
        elif isinstance(item, list | tuple):
            work.append((True, "]"))
            for index in range(len(item) - 1, -1, -1):
                work.append((False, item[index]))
                if index:
                    work.append((True, ","))
            parts.append("[")
        else:
            raise TypeError(f"{type(item).__name__} is not JSON serializable")
    return "".join(parts)
