"""Search (issue 34): full-text over what a reader may see, and a thread's summary.

An agent searches what it may read (`domain.visibility`: what it sent, directs routed to its
identity, broadcasts, its channels' history) and the decisions of its audiences; the operator
searches everything.
On SQLite the index follows the log: the hub's maintenance tick indexes new messages in
batches (`follow`), and a search first indexes what is left when that is little, so a
search always sees what was stored before it. A summary is extractive, and also a model's
when the hub has a chair model (`CAUCUS_CHAIR_MODEL`); the model failing leaves the
extractive one, saying why.
"""

from __future__ import annotations

import asyncio
import logging
import os

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.buckets import TokenBuckets
from caucus.domain.messages import SystemSender
from caucus.domain.names import check_channel_name, check_peer_name
from caucus.domain.peers import Peer
from caucus.domain.search import (
    MAX_LIMIT,
    DecisionHit,
    HitKind,
    MessageHit,
    SearchFilters,
    SearchOrder,
    SearchQuery,
    SearchResult,
    snippet,
)
from caucus.domain.slices import Slices
from caucus.domain.threads import ThreadSummary, digest, transcript
from caucus.domain.visibility import Reader
from caucus.errors import InvalidRequest, NotFound
from caucus.services.decisions import DecisionLog
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

log = logging.getLogger(__name__)

FOLLOW_BATCH = 5_000  # messages indexed per unit of work at most (`domain.slices` sizes it)
MERGE_PAGES = 64  # pages of the index's segments merged per unit of work at most
APART_TARGET = 0.02  # seconds a slice of the index's upkeep holds the index's file
APART_BUDGET = 0.5  # seconds of such slices per job per maintenance round
CATCH_UP = 5_000  # a search indexes up to this many new messages before it reads
MAX_THREAD = 128
THREAD_MESSAGES = 500  # a summary reads a thread's newest messages, at most this many
MODEL_BUDGET = 12_000  # characters of a thread a model is shown
MODEL_TIMEOUT = 60.0

SUMMARY_PROMPT = """Summarize this conversation thread between AI agents (and perhaps their \
human operator) for someone joining it now. In at most 120 words, say what it is about, what \
was decided or done, what is still open, and who is doing what. Use only what the messages \
say. Lines are "[seq] sender: message".

{transcript}
"""


def _index_more(r: Repos, size: int) -> int:
    return r.search.index_more(size)


def _merge_more(r: Repos, pages: int) -> bool:
    return r.search.merge_more(pages)


def _pages_merged(did: bool) -> int:
    return MERGE_PAGES if did else 0


def _count(done: int) -> int:
    return done


def _apart(clock: Clock, *, most: int, least: int) -> Slices:
    return Slices(
        clock.monotonic,
        most=most,
        least=least,
        target=APART_TARGET,
        budget=APART_BUDGET,
        stall=None,
    )


def _gone_through(r: Repos) -> int:
    return r.search.gone_through()


async def index_caught_up(db: Engine) -> int:
    """Index what the maintenance round has not yet, when that is little, so a read through
    the index sees what was stored before it; how many messages stay unindexed."""
    left = await db.read(lambda r: r.search.unindexed())
    if 0 < left <= CATCH_UP:
        await db.index(lambda r: r.search.index_more(CATCH_UP))
        left = await db.read(lambda r: r.search.unindexed())
    return left


def reader_of(peer: Peer | None) -> Reader | None:
    return None if peer is None else Reader(peer.id)


class SearchService:
    def __init__(self, db: Engine, decisions: DecisionLog, clock: Clock, settings: Settings):
        self._db = db
        self._decisions = decisions
        self._clock = clock
        self._settings = settings
        self._budget = TokenBuckets(
            clock,
            capacity=settings.search_rate_capacity,
            refill=settings.search_rate_refill,
            what="searches and summaries",
        )
        # The index's upkeep holds neither the room's writer nor the event loop (`Engine.index`):
        # its slices are sized for fewer commits, not for a send's wait.
        self._slices = _apart(clock, most=FOLLOW_BATCH, least=10)
        self._merges = _apart(clock, most=MERGE_PAGES, least=4)
        self._drops = Slices(clock.monotonic, most=FOLLOW_BATCH, least=50)
        self._dropped = 0  # the queue of purged messages, dropped through this position

    def spend(self, peer: Peer | None) -> None:
        """A search or a summary is a costly read: each identity has a budget of them (the
        operator and the observer one between them)."""
        self._budget.take(peer.id if peer is not None else "viewer")

    async def follow(self) -> int:
        """Forget purged messages and index those stored since the last time, a slice per
        unit of work, then merge the index's segments, each for at most this round's budget
        (`domain.slices`), all of it apart from the room's writer (`Engine.index`); then the
        queue of what the index forgot is dropped from the log's side. How many items."""
        db = self._db
        total = await self._slices.drain(db.index, _index_more, _count)
        merges = self._merges
        merges.begin_round()
        while merges.more and await db.index(merges.unit(_merge_more, _pages_merged)):
            pass
        through = await db.index(_gone_through)
        if through > self._dropped:

            def drop(r: Repos, size: int) -> int:
                return r.search.drop_gone(through, size)

            # On the room's writer: slices of its own size (a round's purge is ~20,000 rows,
            # 31-39 ms in one statement at a million messages).
            await self._drops.drain(db.write, drop, _count)
            if self._drops.more:  # it ended on a short slice, not the budget: all dropped
                self._dropped = through
        return total

    async def search(
        self,
        peer: Peer | None,
        q: str,
        *,
        sender: str | None = None,
        channel: str | None = None,
        since: float | None = None,
        until: float | None = None,
        kind: str | None = None,
        thread: str | None = None,
        order: str = SearchOrder.RELEVANCE,
        limit: int = 20,
    ) -> SearchResult:
        """What `peer` (None: the operator) may see that holds every word of `q`."""
        query = SearchQuery.parse(q)
        filters = _filters(sender, channel, since, until, kind, thread)
        try:
            ordering = SearchOrder(order)
        except ValueError:
            raise InvalidRequest("order is relevance or recent", field="order") from None
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidRequest(f"limit is 1-{MAX_LIMIT}", field="limit")
        self.spend(peer)
        reader = reader_of(peer)
        unindexed = await index_caught_up(self._db)
        hits: list[MessageHit] = []
        more = False
        if filters.kind is not HitKind.DECISION:
            found = await self._db.query(
                lambda r: r.search.messages(
                    query, filters, reader, order=ordering, limit=limit + 1
                ),
                budget=self._settings.query_budget,
            )
            more = len(found) > limit
            hits = [MessageHit(m, snippet(m.content, query.words)) for m, _ in found[:limit]]
        decisions: list[DecisionHit] = []
        if (
            filters.kind in (None, HitKind.DECISION)
            and filters.sender is None
            and not filters.thread
        ):
            channels = None
            if peer is not None:
                channels = frozenset(await self._db.read(lambda r: r.channels.of_peer(peer.id)))
            decisions = await self._decisions.matching(
                query,
                channels,
                limit,
                audience=filters.channel,
                since=filters.since,
                until=filters.until,
            )
        return SearchResult(query, ordering, hits, decisions, more, unindexed)

    async def thread_summary(
        self, peer: Peer | None, thread: str, *, model: bool = True
    ) -> ThreadSummary:
        """A thread's summary from the messages `peer` (None: the operator) may see of it;
        with `model`, also the chair model's when the hub has one."""
        if not 0 < len(thread) <= MAX_THREAD:
            raise InvalidRequest(f"thread is 1-{MAX_THREAD} characters", field="thread")
        self.spend(peer)
        reader = reader_of(peer)
        found = await self._db.query(
            lambda r: r.search.thread(thread, reader, THREAD_MESSAGES),
            budget=self._settings.query_budget,
        )
        if not found:
            # The same answer whether it does not exist or is not yours to read.
            raise NotFound(f"no thread {thread!r} you can read", field="thread")
        digested = digest(thread, found, truncated=len(found) >= THREAD_MESSAGES)
        extractive = digested.text()
        name = self._settings.chair_model
        if not (model and name):
            return ThreadSummary(digested, extractive, "extractive")
        try:
            said = await self._model_summary(transcript(found, MODEL_BUDGET))
        except Exception as exc:  # any failure of the model leaves the extractive summary
            log.warning("the chair model could not summarize thread %s: %s", thread, exc)
            reason = f"{type(exc).__name__}: {exc}"[:300]
            return ThreadSummary(digested, extractive, "extractive", name, reason)
        return ThreadSummary(digested, said, "model", name)

    async def _model_summary(self, text: str) -> str:
        from caucus.deliberation.backends import OpenAICompleter

        s = self._settings
        key = os.environ.get(s.chair_api_key_env) if s.chair_api_key_env else None
        completer = OpenAICompleter(
            model=s.chair_model, base_url=s.chair_base_url, api_key=key, timeout=MODEL_TIMEOUT
        )
        try:
            said = await asyncio.wait_for(
                completer.complete(SUMMARY_PROMPT.format(transcript=text)), MODEL_TIMEOUT
            )
        finally:
            await completer.close()
        said = said.strip()
        if not said:
            raise ValueError("the model answered nothing")
        return said


def _filters(
    sender: str | None,
    channel: str | None,
    since: float | None,
    until: float | None,
    kind: str | None,
    thread: str | None,
) -> SearchFilters:
    if sender is not None and sender not in SystemSender.__members__.values():
        sender = check_peer_name(sender)
    if channel is not None:
        channel = check_channel_name(channel)
    if since is not None and until is not None and until <= since:
        raise InvalidRequest("until must be later than since", field="until")
    try:
        hit = HitKind(kind) if kind else None
    except ValueError:
        kinds = ", ".join(k.value for k in HitKind)
        raise InvalidRequest(f"kind is one of {kinds}", field="kind") from None
    if thread is not None and not 0 < len(thread) <= MAX_THREAD:
        raise InvalidRequest(f"thread is 1-{MAX_THREAD} characters", field="thread")
    return SearchFilters(sender, channel, since, until, hit, thread or None)
