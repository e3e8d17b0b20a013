"""What the console reads besides the feed: who it is, history, every task and offer."""

from __future__ import annotations

from fastapi import APIRouter

from caucus import __version__
from caucus.domain.control import Role
from caucus.web.verbs import Call, serve
from caucus.wire.messages import DroppedInfo, History, RoutedMessage
from caucus.wire.queries import AllOffersQuery, AllTasksQuery, HistoryQuery
from caucus.wire.room import SessionInfo
from caucus.wire.upkeep import UpkeepInfo
from caucus.wire.verbs import oversight
from caucus.wire.work import OfferList, TaskList

router = APIRouter()


async def _session(c: Call[Role, None]) -> SessionInfo:
    return SessionInfo(role=c.who.value, version=__version__)


async def _history(c: Call[Role, HistoryQuery]) -> History:
    rq = c.rq
    page, more = await c.hub.history.page(
        before=rq.before, limit=rq.limit, peer=rq.peer, channel=rq.channel, kind=rq.kind, text=rq.q
    )
    gone = await c.hub.retention.dropped()
    dropped = (
        DroppedInfo(
            messages=gone.messages, through_seq=gone.through_seq, through_ts=gone.through_ts
        )
        if gone.messages
        else None
    )
    return History(messages=[RoutedMessage.of(m) for m in page], more=more, dropped=dropped)


async def _tasks(c: Call[Role, AllTasksQuery]) -> TaskList:
    return TaskList.of(await c.hub.tasks.all(c.rq.status, c.rq.limit))


async def _upkeep(c: Call[Role, None]) -> UpkeepInfo:
    return UpkeepInfo.of(c.hub.loop_watch.lag(), await c.hub.retention.size())


async def _offers(c: Call[Role, AllOffersQuery]) -> OfferList:
    return OfferList.of(await c.hub.offers.listing(c.rq.status))


serve(router, oversight.SESSION, _session)
serve(router, oversight.HISTORY, _history)
serve(router, oversight.ALL_TASKS, _tasks)
serve(router, oversight.ALL_OFFERS, _offers)
serve(router, oversight.UPKEEP, _upkeep)
