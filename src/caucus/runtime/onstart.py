"""Prompts: the system prompt an agent runs under, and its "On Start" section.

A prompt is a Markdown file. A section headed "On Start" (at any heading level, up to the next
heading of the same or a higher level) is what the agent should do as soon as it starts: it is
taken out of the system prompt and sent as the agent's first notice (`prompt:on-start`), so
startup is a turn like any other. Headings inside fenced code blocks are text, not headings.
The default prompt ships in `runtime/prompts/`; `caucus agent --prompt FILE` replaces it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

ON_START_SOURCE = "prompt:on-start"
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True, slots=True)
class Prompt:
    instructions: str  # the system prompt, without its On Start section
    on_start: str | None  # what the On Start section said, if it said anything


def split_on_start(text: str) -> Prompt:
    """The prompt with its first On Start section taken out (heading and body)."""
    lines = text.splitlines(keepends=True)
    fence: str | None = None
    start: int | None = None
    level = 0
    end = len(lines)
    for i, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        heading = _HEADING.match(line.rstrip("\n"))
        if heading is None:
            continue
        depth = len(heading.group(1))
        if start is None:
            if (heading.group(2) or "").strip().casefold() == "on start":
                start, level = i, depth
        elif depth <= level:
            end = i
            break
    if start is None:
        return Prompt(text.strip(), None)
    body = "".join(lines[start + 1 : end]).strip()
    rest = "".join(lines[:start] + lines[end:])
    rest = re.sub(r"\n{3,}", "\n\n", rest).strip()
    return Prompt(rest, body or None)


def default_prompt_text(name: str = "agent") -> str:
    """A prompt that ships with Caucus: `agent` (alone, on stdin) or `room` (in a hub)."""
    return resources.files("caucus.runtime").joinpath(f"prompts/{name}.md").read_text("utf-8")


def load_prompt(path: Path | None, *, default: str = "agent") -> Prompt:
    """The prompt in `path`, or the shipped one called `default`. Raises OSError (unreadable)
    or ValueError (not UTF-8 text) with the path in the message."""
    if path is None:
        return split_on_start(default_prompt_text(default))
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None
    return split_on_start(text)
