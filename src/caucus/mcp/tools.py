"""THE tool catalog: every MCP tool, declared once against `HubPort`.

The stdio bridge serves it over a `RemotePort` (HTTP to the hub), `/mcp` over a `LocalPort`
(the hub's services in-process). Each tool has arguments with enums and, where the name does not
say enough, descriptions (`mcp/args.py`), a view of its result that is its structured content
and its output schema (`mcp/views.py`), annotations, and answers with that plus text a model
reads at a glance. One tool per noun, with an
`action` where a noun has several (as `floor` always had): the catalog stays small, because a
model reads all of it on every turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from caucus.errors import Hint, InChannelMode, InvalidRequest, NotJoined
from caucus.mcp import args as a
from caucus.mcp import descriptions as d
from caucus.mcp import views as v
from caucus.mcp import work_tools as w
from caucus.mcp.ports import HubPort
from caucus.mcp.push import ChannelPush
from caucus.mcp.renderings import (
    catch_up_text,
    decisions_text,
    forms_text,
    joined_text,
    protocol_text,
    search_text,
    sent_line,
    thread_text,
)
from caucus.mcp.results import (
    DISPLACED_NOTE,
    LISTEN_LOOP,
    Heard,
    JoinResult,
    WatchCommand,
    WhoAmI,
)
from caucus.mcp.tool_call import Answered, Call, Reply, joined, needs, present
from caucus.models.envelope import wrap
from caucus.protocol import PROTOCOL_VERSION, essentials_text
from caucus.wire.deliberations import Convened
from caucus.wire.forms import DecisionList, FormList
from caucus.wire.peers import Outcome, PeerList
from caucus.wire.room import ChannelInfo, ChannelList
from caucus.wire.search import SearchFound
from caucus.wire.verbs import identity, messages, meta, room


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str  # `{...}` filled from the hub's limits
    args: type[a.Args]
    view: v.View  # what of the result the structured content holds, and its output schema
    read_only: bool
    destructive: bool
    idempotent: bool
    run: Callable[[Call, Any], Awaitable[Reply]]  # the wire noun and the line of text
    needs_identity: bool = True  # the `handle` argument applies (a session-less client)

    async def answer(self, call: Call, args: Any) -> Answered:
        """The call's structured content (this tool's view of the noun) and its text."""
        noun, line = await self.run(call, args)
        return self.view.of(noun), line


@dataclass
class Catalog:
    """The tools, and what the transport adds: how this session waits (the watcher command
    it names, or channel mode) and what to do when a session joins or leaves."""

    watch_for: Callable[[Call, HubPort], Awaitable[WatchCommand | None]] | None = None
    push: ChannelPush | None = None  # Claude Code channel push (the bridge, when asked)
    inbox_uri: Callable[[HubPort], Awaitable[str | None]] | None = None  # the inbox resource
    on_join: Callable[[HubPort], Awaitable[None]] | None = None
    on_leave: Callable[[HubPort], Awaitable[None]] | None = None
    tools: dict[str, Tool] = field(init=False)

    def __post_init__(self) -> None:
        reads = {"read_only": True, "idempotent": True}
        specs = [
            _tool("join", d.JOIN, a.JoinArgs, v.JOINED, self.join, idempotent=True, identity=False),
            _tool("leave", d.LEAVE, a.NoArgs, v.LEFT, self.leave, destructive=True),
            _tool("whoami", d.WHOAMI, a.NoArgs, v.WHO, self.whoami, **reads),
            _tool("peers", d.PEERS, a.PeersArgs, v.PEERS, self.peers, **reads),
            _tool("set_status", d.STATUS, a.StatusArgs, v.STATUS, self.status, idempotent=True),
            _tool("say", d.SAY, a.SayArgs, v.SENT, self.say),
            _tool("listen", d.LISTEN, a.ListenArgs, v.HEARD, self.listen),
            _tool("protocol", d.PROTOCOL, a.ProtocolArgs, v.PROTOCOL, self.protocol, **reads),
            _tool("channel", d.CHANNEL, a.ChannelArgs, v.CHANNELS, self.channel, idempotent=True),
            _tool("announce", d.ANNOUNCE, a.AnnounceArgs, v.SENT, self.announce),
            _tool("floor", d.FLOOR, a.FloorArgs, v.FLOOR, self.floor),
            _tool("task", d.TASK, a.TaskArgs, v.TASKS, w.task),
            _tool("offer", d.OFFER, a.OfferArgs, v.OFFERS, w.offer),
            _tool("reservation", d.RESERVATION, a.ReservationArgs, v.RESERVATIONS, w.reservation),
            _tool("search", d.SEARCH, a.SearchArgs, v.FOUND, self.search, **reads),
            _tool("teammate", d.TEAMMATE, a.TeammateArgs, v.TEAMMATES, w.teammate),
            _tool("ask_operator", d.ASK, a.AskArgs, v.FORMS, self.ask, idempotent=True),
            _tool("decisions", d.DECISIONS, a.DecisionsArgs, v.DECISIONS, self.decisions, **reads),
            _tool("convene", d.CONVENE, a.ConveneArgs, v.CONVENED, self.convene),
            _tool("submit_position", d.POSITION, a.PositionArgs, v.POSITION, self.position),
        ]
        if self.watch_for is not None:
            watch = _tool("watch_command", d.WATCH, a.NoArgs, v.WATCH, self.watch)
            specs.insert(7, watch)
        if self.push is not None:
            confirm = _tool("confirm_delivery", d.CONFIRM, a.ConfirmArgs, v.PUSH, self.confirm)
            specs.insert(8, confirm)
        self.tools = {s.name: s for s in specs}

    # --- identity ---------------------------------------------------------------------------
    async def join(self, call: Call, x: a.JoinArgs) -> Reply:
        port = call.port
        await port.identify()
        # A handle resumes its peer under the name it holds, unless a new one is asked for.
        wanted = x.name or port.name or (None if x.handle else call.default_name)
        if not wanted and not x.handle:
            raise InvalidRequest("give a name: join(name='...')", field="name")
        if port.name is not None and wanted and wanted != port.name and x.handle is None:
            raise InvalidRequest(
                f"this session is joined as {port.name!r}; it cannot become {wanted!r} "
                "(call leave first if you really mean to)",
                field="name",
            )
        known = x.protocol_version or None  # 0 asks for the text again
        if x.protocol_version is None and port.name is not None:
            known = PROTOCOL_VERSION  # joined in this session already: it read the text
        joined = await port.join(
            wanted,
            x.skills,
            x.description,
            protocol_version=known,
            handle=x.handle,
            agent_key=call.agent_key,
        )
        if self.on_join is not None:
            await self.on_join(port)
        backlog = await port.catch_up() if joined.outcome == Outcome.CREATED else []
        waiting = await self.watch_for(call, port) if self.watch_for is not None else None
        watch = waiting.command if waiting is not None else None
        result = JoinResult(
            name=joined.name,
            outcome=joined.outcome,
            handle=joined.handle,
            protocol_version=joined.protocol_version,
            protocol=essentials_text() if joined.protocol else None,  # the core: `protocol`
            note=joined.note,
            watch=watch,
            wait=waiting.how if waiting is not None else LISTEN_LOOP,
            catch_up=catch_up_text(backlog, joined.name) if backlog else None,
            inbox=await self.inbox_uri(port) if self.inbox_uri is not None else None,
        )
        return result, await joined_text(port, result)

    async def leave(self, call: Call, _: a.NoArgs) -> Reply:
        port = await joined(call)
        left = await port.leave()
        if self.on_leave is not None:
            await self.on_leave(port)
        return left, f"{left.name} left the hub; the name is free."

    async def whoami(self, call: Call, _: a.NoArgs) -> Reply:
        port = await present(call)
        if port.name is None:
            who = WhoAmI(joined=False, name=None, default_name=call.default_name, pending=0)
            hint = f" (join would use the name {call.default_name!r})" if call.default_name else ""
            return who, f"not joined yet{hint}."
        peek = await port.verb(messages.PEEK)
        who = WhoAmI(
            joined=True, name=port.name, default_name=call.default_name, pending=peek.pending
        )
        waiting = f"{peek.pending} message(s) wait" if peek.pending else "nothing waits"
        return who, f"you are {port.name}; {waiting} (call listen to read them)."

    async def peers(self, call: Call, x: a.PeersArgs) -> Reply:
        port = await present(call)
        if x.name is not None:
            found = [await port.verb(identity.PING, peer=x.name)]
        else:
            found = (await port.verb(identity.PEERS)).peers
        if x.channel is not None:
            wanted = "#" + x.channel.lstrip("#")
            channels = (await port.verb(room.CHANNELS)).channels
            members = {m for c in channels if c.name == wanted for m in c.members}
            found = [p for p in found if p.name in members]
        listing = ", ".join(f"{p.name} ({p.state})" for p in found) or "nobody"
        return PeerList(peers=found), f"{len(found)} peer(s): {listing}."

    async def status(self, call: Call, x: a.StatusArgs) -> Reply:
        port = await joined(call)
        return await port.verb(identity.SET_STATUS, status=x.status), "status set."

    # --- messages ---------------------------------------------------------------------------
    async def say(self, call: Call, x: a.SayArgs) -> Reply:
        port = await joined(call)
        sent = await port.say(x.to, x.content, x.thread, x.reply_to)
        return sent, sent_line(sent, x.to)

    async def listen(self, call: Call, x: a.ListenArgs) -> Reply:
        port = await joined(call)
        if self.push is not None and self.push.live:
            raise InChannelMode(
                "this session is in channel mode: messages arrive in the conversation by "
                "themselves; there is nothing to listen for"
            )
        heard = await port.listen(x.timeout)
        text = wrap(heard.messages, me=port.name)
        if heard.displaced_watcher:
            text = f"[caucus] {DISPLACED_NOTE}\n{text}"
        return Heard.of(heard.messages, heard.displaced_watcher), text

    async def watch(self, call: Call, _: a.NoArgs) -> Reply:
        port = await joined(call)
        assert self.watch_for is not None
        waiting = await self.watch_for(call, port)
        if waiting is None:
            raise NotJoined("join first: the watcher needs an identity", hint=Hint.REGISTER)
        return waiting, waiting.how

    async def confirm(self, call: Call, x: a.ConfirmArgs) -> Reply:
        await joined(call)
        assert self.push is not None
        state = self.push.confirm(x.nonce)
        return state, state.note

    async def protocol(self, call: Call, x: a.ProtocolArgs) -> Reply:
        text = await call.port.verb(meta.PROTOCOL, section=x.section)
        return text, protocol_text(text)

    async def announce(self, call: Call, x: a.AnnounceArgs) -> Reply:
        port = await joined(call)
        sent = await port.verb(messages.ANNOUNCE, content=x.content, subject=x.subject)
        return sent, f"announced as #{sent.seq} to {len(sent.delivered_to)} peer(s)."

    # --- channels and the floor -------------------------------------------------------------
    async def channel(self, call: Call, x: a.ChannelArgs) -> Reply:
        action = x.action
        if action is a.ChannelAction.LIST:
            found = (await (await present(call)).verb(room.CHANNELS)).channels
            names = ", ".join(c.name for c in found) or "none yet"
            return ChannelList(channels=found), f"{len(found)} channel(s): {names}."
        port = await joined(call)
        channel = needs(x.channel, "channel", action)
        if action is a.ChannelAction.JOIN:
            done = await port.verb(room.JOIN_CHANNEL, channel=channel, private=bool(x.private))
            how = "joined" if done.joined else "already in"
            line = f"{how} {done.name} with {', '.join(done.members)}."
            return ChannelList(channels=[ChannelInfo.model_validate(dict(done))]), line
        if action is a.ChannelAction.LEAVE:
            await port.verb(room.LEAVE_CHANNEL, channel=channel)
            name = "#" + channel.lstrip("#")
            rest = [c for c in (await port.verb(room.CHANNELS)).channels if c.name == name]
            return ChannelList(channels=rest), f"left {name}."
        topic = needs(x.topic, "topic", action)
        info = await port.verb(room.SET_TOPIC, channel=channel, topic=topic)
        return ChannelList(channels=[info]), f"topic of {info.name} set."

    async def floor(self, call: Call, x: a.FloorArgs) -> Reply:
        if x.action.value == "status":  # a look: works before join
            port = await present(call)
            floor = await port.floor_now(x.scope)
        else:
            port = await joined(call)
            floor = await port.verb(room.FLOOR, action=x.action, scope=x.scope, reason=x.reason)
        hands = ", ".join(floor.hands) or "none"
        return floor, f"floor of {floor.scope}: held by {floor.holder or 'nobody'}; hands: {hands}."

    # --- tasks and the job board ------------------------------------------------------------
    async def search(self, call: Call, x: a.SearchArgs) -> Reply:
        port = await joined(call)
        if x.action is a.SearchAction.SUMMARIZE:
            thread = needs(x.thread, "thread", x.action)
            summary = await port.verb(messages.THREAD_SUMMARY, thread=thread)
            return SearchFound(summary=summary), thread_text(summary)
        filters = {
            "sender": x.sender,
            "channel": x.channel,
            "kind": x.kind.value if x.kind else None,
            "thread": x.thread,
            "since": x.since,
            "until": x.until,
            "order": x.order.value,
            "limit": x.limit,
        }
        found = await port.verb(messages.SEARCH, q=needs(x.q, "q", x.action), **filters)
        return SearchFound(found=found), search_text(found, me=port.name)

    # --- the operator's forms and the ledger -------------------------------------------------
    async def ask(self, call: Call, x: a.AskArgs) -> Reply:
        if x.title is None and x.fields is None:  # the list: works before join
            port = await present(call)
            found = (await port.verb(room.FORMS)).forms
            return FormList(forms=found), forms_text(found, me=port.name)
        port = await joined(call)
        title = needs(x.title, "title", "asking")
        if not x.fields:
            raise InvalidRequest("fields are required for asking (1-20 of them)", field="fields")
        fields = [f.model_dump(exclude_none=True, mode="json") for f in x.fields]
        form = await port.verb(room.ASK_OPERATOR, title=title, fields=fields, to=x.to)
        line = f"form {form.form_id} waits for the operator; its answer comes by listen."
        return FormList(forms=[form]), line

    async def decisions(self, call: Call, x: a.DecisionsArgs) -> Reply:
        port = await present(call)
        found = (await port.verb(room.DECISIONS, limit=x.limit)).decisions
        return DecisionList(decisions=found), decisions_text(found)

    # --- deliberation ----------------------------------------------------------------------
    async def convene(self, call: Call, x: a.ConveneArgs) -> Reply:
        port = await joined(call)
        channel = len(x.panel) == 1 and x.panel[0].startswith("#")
        evidence = [e.model_dump(exclude_none=True) for e in x.evidence or []]
        d = await port.verb(
            room.CONVENE,
            subject=x.subject,
            panel=x.panel[0] if channel else list(x.panel),
            chair=x.chair,
            evidence=evidence,
            rounds=x.rounds,
            deadline=x.deadline,
        )
        line = (
            f"deliberation {d.deliberation_id} convened: {len(d.panel)} panelist(s), chair "
            f"{d.chair}; the decision is announced when it is recorded."
        )
        return Convened.of(d), line

    async def position(self, call: Call, x: a.PositionArgs) -> Reply:
        port = await joined(call)
        p = await port.verb(
            room.SUBMIT_POSITION,
            deliberation_id=x.deliberation,
            stance=x.stance.value,
            summary=x.summary,
            confidence=x.confidence,
            evidence=list(x.evidence or []),
        )
        return p, f"your {p.stance} position on {x.deliberation} is in."


def _tool(
    name: str,
    description: str,
    args: type[a.Args],
    view: v.View,
    run: Callable[[Call, Any], Awaitable[Reply]],
    *,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    identity: bool = True,
) -> Tool:
    return Tool(name, description, args, view, read_only, destructive, idempotent, run, identity)
