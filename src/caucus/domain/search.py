"""Full-text search (issue 34): what a query means, what a hit is, and the snippet shown.

A query is words and "quoted phrases", all of which a hit must hold. Words are runs of
letters and digits (as both backends' tokenizers split them), so `reservations.py` is the
phrase "reservations py" and punctuation never reaches a backend's query syntax. Each backend
stems English words (SQLite FTS5's porter tokenizer, PostgreSQL's `english` configuration).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from caucus.domain.messages import Message, MessageKind
from caucus.errors import InvalidRequest

MAX_QUERY = 200  # characters
MAX_WORDS = 24
MAX_LIMIT = 50
SNIPPET_WIDTH = 180  # characters around the best run of matches
MARK = "**"  # around a matched word in a snippet

_WORD = re.compile(r"[^\W_]+")
_PART = re.compile(r'"([^"]*)"?|(\S+)')
_SPACE = re.compile(r"\s+")
# English words too common to search for: PostgreSQL's `english` configuration ignores them,
# so a query drops them as a lone word on both stores (inside a phrase they stay).
STOP_WORDS = frozenset(
    _WORD.findall(
        "a about above after again against all am an and any are as at be because been before"
        " being below between both but by can did do does doing don down during each few for"
        " from further had has have having he her here hers herself him himself his how i if in"
        " into is it its itself just me more most my myself no nor not now of off on once only"
        " or other our ours ourselves out over own s same she should so some such t than that"
        " the their theirs them themselves then there these they this those through to too"
        " under until up very was we were what when where which while who whom why will with"
        " you your yours yourself yourselves"
    )
)
# Suffixes folded away when a snippet looks for the query's words in a text; the backends
# stem properly, this only has to find the words they matched.
_SUFFIXES = (
    "ations",
    "ation",
    "ings",
    "ing",
    "ies",
    "ied",
    "ers",
    "er",
    "es",
    "ed",
    "ly",
    "s",
    "e",
    "y",
)


class HitKind(StrEnum):
    """What a hit is, for people and for the `kind` filter."""

    MESSAGE = "message"  # a direct, channel or broadcast message
    ANNOUNCEMENT = "announcement"
    TASK = "task"  # a task handed over, its result, failure or question
    DECISION = "decision"  # a record on the decision ledger


class SearchOrder(StrEnum):
    RELEVANCE = "relevance"
    RECENT = "recent"


_TASK_KINDS = (
    MessageKind.TASK,
    MessageKind.RESULT,
    MessageKind.FAILURE,
    MessageKind.INPUT_REQUEST,
    MessageKind.TASK_CANCELED,
)


def hit_kind(kind: str) -> HitKind:
    if kind == MessageKind.ANNOUNCE:
        return HitKind.ANNOUNCEMENT
    if kind in _TASK_KINDS:
        return HitKind.TASK
    return HitKind.MESSAGE


def message_kinds(kind: HitKind | None) -> list[str] | None:
    """The message kinds a `kind` filter keeps (None: all; empty: none, as for decisions)."""
    if kind is None:
        return None
    return [str(k) for k in MessageKind if hit_kind(k) is kind]


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """Phrases (runs of lowercase words), every one of which a hit holds."""

    text: str
    phrases: tuple[tuple[str, ...], ...]

    @classmethod
    def parse(cls, text: str) -> SearchQuery:
        if len(text) > MAX_QUERY:
            raise InvalidRequest(f"q is at most {MAX_QUERY} characters", field="q")
        phrases: list[tuple[str, ...]] = []
        common = False
        for quoted, bare in _PART.findall(text):
            words = tuple(_WORD.findall((quoted or bare).lower()))
            if len(words) == 1 and words[0] in STOP_WORDS:
                common = True
            elif words and words not in phrases:
                phrases.append(words)
        count = sum(len(p) for p in phrases)
        if not count:
            raise InvalidRequest(
                "q has only words too common to search for: add one that tells messages apart"
                if common
                else "q has no words to search for: give words or a quoted phrase",
                field="q",
            )
        if count > MAX_WORDS:
            raise InvalidRequest(f"q has at most {MAX_WORDS} words", field="q")
        return cls(text, tuple(phrases))

    @property
    def words(self) -> frozenset[str]:
        return frozenset(w for p in self.phrases for w in p)

    def fts5(self) -> str:
        """The FTS5 MATCH expression: each phrase quoted (words only, so nothing to escape)."""
        return " ".join('"' + " ".join(p) + '"' for p in self.phrases)

    def tsquery(self) -> str:
        """The `to_tsquery` text: phrases joined by AND, words in a phrase adjacent."""
        return " & ".join("(" + " <-> ".join(f"'{w}'" for w in p) + ")" for p in self.phrases)


@dataclass(frozen=True, slots=True)
class SearchFilters:
    sender: str | None = None
    channel: str | None = None
    since: float | None = None
    until: float | None = None
    kind: HitKind | None = None
    thread: str | None = None


@dataclass(slots=True)
class MessageHit:
    message: Message
    snippet: str

    @property
    def kind(self) -> HitKind:
        return hit_kind(self.message.kind)


def fold(word: str) -> str:
    """A word with a common English suffix folded away (for highlighting only)."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def snippet(text: str, words: frozenset[str], width: int = SNIPPET_WIDTH) -> str:
    """About `width` characters of `text` around its densest run of the query's words, on
    one line, each matched word between `MARK`s, with an ellipsis where it was cut."""
    flat = _SPACE.sub(" ", text).strip()
    wanted = {fold(w) for w in words}
    found = [m for m in _WORD.finditer(flat) if fold(m.group()) in wanted]
    if len(flat) <= width:
        start, end = 0, len(flat)
    else:
        best, best_count = 0, -1
        for i, m in enumerate(found):
            count = sum(1 for n in found[i:] if n.end() - m.start() <= width)
            if count > best_count:
                best, best_count = m.start(), count
        start = max(0, min(best - width // 4, len(flat) - width))
        end = min(len(flat), start + width)
        # Cut at spaces so no word is split.
        if start > 0 and (space := flat.find(" ", start, best if found else start + 20)) >= 0:
            start = space + 1
        if end < len(flat) and (space := flat.rfind(" ", start, end)) > start:
            end = space
    out: list[str] = ["…"] if start > 0 else []
    at = start
    for m in found:
        if m.start() < start or m.end() > end:
            continue
        out += [flat[at : m.start()], MARK, m.group(), MARK]
        at = m.end()
    out.append(flat[at:end])
    if end < len(flat):
        out.append("…")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class DecisionHit:
    record: dict[str, Any]
    snippet: str


def record_text(record: dict[str, Any]) -> str:
    """What a search reads of a decision record: its subject, verdict, and what each side
    said."""
    parts = [str(record.get("subject", "")), str(record.get("decision", ""))]
    for side in ("positions", "dissent"):
        entries = record.get(side)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                parts += [str(entry.get(k, "")) for k in ("agent", "stance", "summary")]
    return " — ".join(p for p in parts if p)


def holds(text: str, query: SearchQuery) -> bool:
    """Whether `text` holds every word of the query (a decision is matched in Python: the
    ledger is a file, and short)."""
    present = {fold(w) for w in _WORD.findall(text.lower())}
    return all(fold(w) in present for w in query.words)


@dataclass(slots=True)
class SearchResult:
    query: SearchQuery
    order: SearchOrder
    hits: list[MessageHit]
    decisions: list[DecisionHit]
    more: bool
    unindexed: int  # the newest messages the index does not hold yet (not searched)
