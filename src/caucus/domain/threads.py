"""A thread's summary (issue 34): who spoke, how it opened, its key points, where it stands.

Extractive: the key points are the thread's own sentences that carry most of its frequent
words (Luhn's method), in the order they were said, so nothing is invented; a model's summary
(`services.search`) is offered beside it when the hub has a chair model.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from caucus.domain.messages import Message

KEY_POINTS = 4
QUOTE = 160  # characters of a quoted message or sentence

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    _WORD.findall(
        "a an and are as at be been but by can could did do does for from had has have he her"
        " his i if in into is it its just let me my no not of on or our she so than that the"
        " their them then there these they this to too us was we were what when which who will"
        " with would yes you your"
    )
)


@dataclass(frozen=True, slots=True)
class KeyPoint:
    seq: int
    sender: str
    text: str


@dataclass(frozen=True, slots=True)
class ThreadTask:
    task_id: str
    state: str
    subject: str | None


@dataclass(slots=True)
class ThreadDigest:
    thread: str
    messages: int
    truncated: bool  # the thread is longer: these are its newest messages
    participants: list[tuple[str, int]]  # name, messages sent; most first
    first_ts: float
    last_ts: float
    opening: Message
    latest: Message
    key_points: list[KeyPoint] = field(default_factory=list)
    tasks: list[ThreadTask] = field(default_factory=list)

    def text(self) -> str:
        """The extractive summary as a few plain sentences."""
        who = ", ".join(f"{n} ({c})" for n, c in self.participants)
        span = f"{_when(self.first_ts)} to {_when(self.last_ts)}"
        head = "newest " if self.truncated else ""
        lines = [f"{self.messages} {head}messages, {span}, from {who}."]
        lines.append(f"Opened by {self.opening.sender}: {quote(self.opening.content)}")
        if self.key_points:
            points = "; ".join(f"{p.sender}: {quote(p.text)}" for p in self.key_points)
            lines.append(f"Key points: {points}")
        if self.latest.seq != self.opening.seq:
            lines.append(f"Latest, {self.latest.sender}: {quote(self.latest.content)}")
        if self.tasks:
            tasks = ", ".join(
                f"{t.task_id} {t.state}" + (f" ({t.subject})" if t.subject else "")
                for t in self.tasks
            )
            lines.append(f"Tasks: {tasks}.")
        return "\n".join(lines)


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


def quote(text: str, width: int = QUOTE) -> str:
    flat = " ".join(text.split())
    if len(flat) > width:
        flat = flat[: width - 1].rsplit(" ", 1)[0] + "…"
    return f"“{flat}”"


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2]


def digest(thread: str, found: list[Message], *, truncated: bool = False) -> ThreadDigest:
    """The extractive summary of a thread's messages (at least one, in seq order)."""
    spoken = Counter(m.sender for m in found)
    opening, latest = found[0], found[-1]
    middle = found[1:-1]
    frequent = Counter(w for m in found for w in set(_words(m.content)))
    candidates: list[tuple[float, int, KeyPoint]] = []
    for m in middle:
        for n, sentence in enumerate(s.strip() for s in _SENTENCE.split(m.content)):
            words = _words(sentence)
            if len(words) < 3:
                continue
            score = sum(frequent[w] for w in set(words) if frequent[w] > 1) / math.sqrt(len(words))
            if score > 0:
                candidates.append((score, m.seq * 1000 + n, KeyPoint(m.seq, m.sender, sentence)))
    best = sorted(candidates, key=lambda c: (-c[0], c[1]))[:KEY_POINTS]
    tasks: dict[str, ThreadTask] = {}
    for m in found:
        meta = m.meta or {}
        task_id, state = meta.get("task_id"), meta.get("state")
        if isinstance(task_id, str) and isinstance(state, str):
            subject = meta.get("subject")
            tasks[task_id] = ThreadTask(
                task_id, state, subject if isinstance(subject, str) else None
            )
    return ThreadDigest(
        thread=thread,
        messages=len(found),
        truncated=truncated,
        participants=sorted(spoken.items(), key=lambda p: (-p[1], p[0])),
        first_ts=opening.ts,
        last_ts=latest.ts,
        opening=opening,
        latest=latest,
        key_points=[c[2] for c in sorted(best, key=lambda c: c[1])],
        tasks=list(tasks.values()),
    )


def transcript(found: list[Message], budget: int) -> str:
    """The thread as `sender: content` lines for a model, within `budget` characters: the
    opening kept, then as many of the newest as fit."""
    lines = [f"[{m.seq}] {m.sender}: {' '.join(m.content.split())}" for m in found]
    head, rest = lines[0][:budget], lines[1:]
    kept: list[str] = []
    left = budget - len(head)
    for line in reversed(rest):
        if len(line) + 1 > left:
            kept.append("[…]")
            break
        kept.append(line)
        left -= len(line) + 1
    return "\n".join([head, *reversed(kept)])


@dataclass(slots=True)
class ThreadSummary:
    digest: ThreadDigest
    summary: str
    method: str  # extractive | model
    model: str | None = None
    model_error: str | None = None
