"""Who may read what (issue 47 item 1), as a property of every room: a stateful model test
(hypothesis) generates rooms — registrations, renames, leaves, kicks, peers going offline and
coming back, time passing past the TTL and the grace, channel joins and leaves, private
channels, the operator's invitations and removals, directs, broadcasts, channel posts,
operator notes, tasks — on each backend, and checks for every reader that search, thread
summaries, the task reads, the channel list and the inbox give it only what it was delivered
or may read as a channel member, and exactly what `domain.visibility` says it may read.

The model keeps identities by id; names are a small set so they are taken again, renamed
into and out of. Time moves only with the hub's `FakeClock`."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from caucus.domain.peers import Peer
from caucus.domain.visibility import (
    BROADCAST,
    Reader,
    may_read,
    may_see_channel,
    may_see_form,
    may_see_task,
)
from caucus.errors import CaucusError, ChannelPrivate, ChannelPublic, NotFound
from caucus.ids import hash_token
from caucus.services.hub import Hub
from caucus.storage.engine import Engine
from caucus.testing import FakeClock, hub_settings

NAMES = ("ann", "bob", "cy")
CHANNELS = ("#dev", "#ops", "#approve-ann")
WORD = "zebra"  # in every message the model sends, so one search finds them all
TTL, GRACE = 100.0, 300.0
MAX_MESSAGES = 45  # a search answers 50 at most


@dataclass
class Ident:
    id: int
    token: str
    name: str
    ended: bool = False
    away_since: float | None = None  # reaped (offline, or silent past the TTL) at


@dataclass
class Sent:
    id: str
    thread: str
    sender_id: int | None
    target: str
    recipient_id: int | None  # a direct message's
    audience: frozenset[int]  # the identities it was routed to
    seq: int  # the number a model sees it by


@dataclass
class Room:
    idents: dict[int, Ident] = field(default_factory=dict)
    members: dict[str, set[int]] = field(default_factory=dict)  # existing channels
    private: set[str] = field(default_factory=set)
    invited: dict[str, set[int]] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)
    tasks: dict[str, tuple[int, int]] = field(default_factory=dict)  # sender, worker
    forms: dict[str, tuple[int, str, bool]] = field(default_factory=dict)  # asker, to, answered
    received: dict[int, set[str]] = field(default_factory=dict)

    def live(self) -> list[Ident]:
        return [i for i in self.idents.values() if not i.ended]

    def holder(self, name: str) -> Ident | None:
        return next((i for i in self.live() if i.name == name), None)

    def channels_of(self, ident_id: int) -> set[str]:
        return {c for c, m in self.members.items() if ident_id in m}

    def end(self, ident: Ident) -> None:
        ident.ended = True
        for members in self.members.values():
            members.discard(ident.id)
        for invited in self.invited.values():
            invited.discard(ident.id)


def engine_factory(backend: str, request: pytest.FixtureRequest) -> Callable[[Path], Engine]:
    if backend == "sqlite":
        from caucus.storage.sqlite_engine import SqliteEngine

        return lambda folder: SqliteEngine(folder / "room.db")
    from caucus.storage.postgres_engine import PgEngine
    from caucus.testing.postgres import fresh_database

    server = request.getfixturevalue("postgres_server")
    return lambda _folder: PgEngine(fresh_database(server))


class WhoReads(RuleBasedStateMachine):
    make_engine: Callable[[Path], Engine]

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.dir = Path(tempfile.mkdtemp(prefix="caucus-who-reads-"))
        self.clock = FakeClock()
        options = hub_settings(
            self.dir,
            send_rate_capacity=1e9,
            send_rate_refill=1e9,
            peer_ttl=TTL,
            reaped_grace=GRACE,
            resume_rate_capacity=1e9,
            search_rate_capacity=1e9,
            pending_forms_max=1000,
        )
        self.hub = Hub(
            options, db=self.make_engine(self.dir), clock=self.clock, run_maintenance=False
        )
        self._run(self.hub.start())
        self.room = Room()
        self.n = 0

    def teardown(self) -> None:
        with contextlib.suppress(Exception):
            self._check()
        self._run(self.hub.stop())
        self.loop.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _run(self, work: Any) -> Any:
        return self.loop.run_until_complete(work)

    def _act(self, ident: Ident) -> Peer:
        """The peer as its token stands for it now (a peer away comes back by calling)."""
        peer: Peer = self._run(self.hub.principals.agent(ident.token))
        ident.away_since = None
        return peer

    def _word(self) -> str:
        self.n += 1
        return f"{WORD} number {self.n}"

    def _pick(self, data: st.DataObject, *, of: list[Ident] | None = None) -> Ident | None:
        found = sorted(of if of is not None else self.room.live(), key=lambda i: i.id)
        return data.draw(st.sampled_from(found)) if found else None

    # --- identities -----------------------------------------------------------------------
    @initialize()
    def start(self) -> None:
        for name in NAMES[:2]:
            self._register(name)

    def _register(self, name: str) -> None:
        reg = self._run(self.hub.principals.register(name=name))
        peer = self._run(self.hub.principals.agent(reg.token))
        self.room.idents[peer.id] = Ident(peer.id, reg.token, name)

    @rule(name=st.sampled_from(NAMES))
    def register(self, name: str) -> None:
        if self.room.holder(name) is None:
            self._register(name)

    @rule(data=st.data(), name=st.sampled_from(NAMES))
    def rename(self, data: st.DataObject, name: str) -> None:
        ident = self._pick(data)
        holder = self.room.holder(name)
        if ident is None or (holder is not None and holder is not ident):
            return
        self._run(self.hub.principals.register(name=name, token=ident.token))
        ident.name = name
        ident.away_since = None

    @rule(data=st.data(), kicked=st.booleans())
    def leave(self, data: st.DataObject, kicked: bool) -> None:
        ident = self._pick(data)
        if ident is None:
            return
        if kicked:
            self._run(self.hub.control.kick(ident.name))
        else:
            self._run(self.hub.registry.leave(self._act(ident)))
        self.room.end(ident)

    @rule(data=st.data())
    def offline(self, data: st.DataObject) -> None:
        ident = self._pick(data)
        if ident is not None:
            self._run(self.hub.registry.offline(self._act(ident)))
            ident.away_since = self.clock.now()

    @rule(grace=st.booleans())
    def time_passes(self, grace: bool) -> None:
        """Past the TTL every quiet peer is reaped (it comes back by calling); one away past
        the grace is forgotten for good."""
        self._passes(TTL + 1)
        if grace:
            self._passes(GRACE + 1)

    def _passes(self, seconds: float) -> None:
        self.clock.advance(seconds)
        now = self.clock.now()
        self._run(self.hub.registry.reap())
        for ident in self.room.live():
            if ident.away_since is None:
                ident.away_since = now
            elif ident.away_since < now - GRACE:
                self.room.end(ident)

    # --- channels -------------------------------------------------------------------------
    @rule(data=st.data(), channel=st.sampled_from(CHANNELS), private=st.booleans())
    def join(self, data: st.DataObject, channel: str, private: bool) -> None:
        ident = self._pick(data)
        if ident is None:
            return
        room = self.room
        exists = channel in room.members
        member = exists and ident.id in room.members[channel]
        refused: type[CaucusError] | None = None
        if exists and not member:
            if channel in room.private and ident.id not in room.invited.get(channel, set()):
                refused = ChannelPrivate
            elif private and channel not in room.private:
                refused = ChannelPublic
        outcome: type[CaucusError] | None = None
        try:
            self._run(self.hub.channels.join(self._act(ident), channel, private=private))
        except (ChannelPrivate, ChannelPublic) as exc:
            outcome = type(exc)
        assert outcome is refused, (channel, outcome, refused)
        if refused is not None:
            return
        if not exists:
            room.members[channel] = set()
            if private or channel.startswith("#approve-"):
                room.private.add(channel)
        room.members[channel].add(ident.id)

    @rule(data=st.data(), channel=st.sampled_from(CHANNELS))
    def leave_channel(self, data: st.DataObject, channel: str) -> None:
        ident = self._pick(data)
        if ident is None or ident.id not in self.room.members.get(channel, set()):
            return
        self._run(self.hub.channels.leave(self._act(ident), channel))
        self.room.members[channel].discard(ident.id)

    @rule(channel=st.sampled_from(CHANNELS), private=st.booleans())
    def operator_sets_privacy(self, channel: str, private: bool) -> None:
        if channel not in self.room.members:
            return
        self._run(self.hub.channels.set_private(channel, private))
        (self.room.private.add if private else self.room.private.discard)(channel)

    @rule(data=st.data(), channel=st.sampled_from(CHANNELS), remove=st.booleans())
    def operator_invites(self, data: st.DataObject, channel: str, remove: bool) -> None:
        ident = self._pick(data)
        if ident is None or channel not in self.room.members:
            return
        if remove:
            self._run(self.hub.channels.remove(channel, ident.name))
            self.room.members[channel].discard(ident.id)
            self.room.invited.get(channel, set()).discard(ident.id)
        else:
            self._run(self.hub.channels.invite(channel, ident.name))
            self.room.invited.setdefault(channel, set()).add(ident.id)

    # --- what is said -----------------------------------------------------------------------
    def _routed(
        self,
        receipt: Any,
        sender: Ident | None,
        target: str,
        recipient: int | None,
        audience: set[int],
        thread: str | None = None,
    ) -> None:
        self.room.sent.append(
            Sent(
                receipt.message_id,
                thread or receipt.message_id,
                sender.id if sender else None,
                target,
                recipient,
                frozenset(audience),
                receipt.seq,
            )
        )

    @precondition(lambda self: len(self.room.sent) < MAX_MESSAGES)
    @rule(data=st.data(), to=st.sampled_from(NAMES))
    def direct(self, data: st.DataObject, to: str) -> None:
        sender, holder = self._pick(data), self.room.holder(to)
        if sender is None or holder is None or holder is sender:
            return
        receipt = self._run(self.hub.delivery.send(self._act(sender), to=to, content=self._word()))
        self._routed(receipt, sender, to, holder.id, {holder.id})

    @precondition(lambda self: len(self.room.sent) < MAX_MESSAGES)
    @rule(data=st.data())
    def broadcast(self, data: st.DataObject) -> None:
        sender = self._pick(data)
        if sender is None:
            return
        peer = self._act(sender)
        receipt = self._run(self.hub.delivery.send(peer, to=BROADCAST, content=self._word()))
        others = {i.id for i in self.room.live() if i is not sender}
        self._routed(receipt, sender, BROADCAST, None, others)

    @precondition(lambda self: len(self.room.sent) < MAX_MESSAGES)
    @rule(data=st.data(), channel=st.sampled_from(CHANNELS))
    def post(self, data: st.DataObject, channel: str) -> None:
        sender = self._pick(data)
        if sender is None:
            return
        room = self.room
        members = room.members.get(channel)
        shut = members is not None and channel in room.private and sender.id not in members
        try:
            receipt = self._run(
                self.hub.delivery.send(self._act(sender), to=channel, content=self._word())
            )
        except ChannelPrivate:
            assert shut, channel
            return
        assert not shut, channel
        if members is None:
            members = room.members[channel] = set()
            if channel.startswith("#approve-"):
                room.private.add(channel)
        members.add(sender.id)
        self._routed(receipt, sender, channel, None, members - {sender.id})

    @precondition(lambda self: len(self.room.sent) < MAX_MESSAGES)
    @rule(to=st.sampled_from(NAMES + CHANNELS))
    def operator_says(self, to: str) -> None:
        holder = self.room.holder(to) if not to.startswith("#") else None
        members = self.room.members.get(to)
        if holder is None and members is None:
            return
        receipt = self._run(self.hub.control.say(to, self._word()))
        if holder is not None:
            self._routed(receipt, None, to, holder.id, {holder.id})
        else:
            assert members is not None
            self._routed(receipt, None, to, None, set(members))

    @precondition(lambda self: len(self.room.sent) < MAX_MESSAGES)
    @rule(data=st.data(), to=st.sampled_from(NAMES))
    def task(self, data: st.DataObject, to: str) -> None:
        sender, worker = self._pick(data), self.room.holder(to)
        if sender is None or worker is None or worker is sender:
            return
        task = self._run(self.hub.tasks.send(self._act(sender), to=to, payload=self._word()))
        self.room.tasks[task.id] = (sender.id, worker.id)
        page, _ = self._run(self.hub.history.page(limit=1, kind="task"))
        item = page[-1]
        assert (item.meta or {}).get("task_id") == task.id
        self.room.sent.append(
            Sent(item.id, task.thread, sender.id, to, worker.id, frozenset({worker.id}), item.seq)
        )

    @precondition(lambda self: 0 < len(self.room.sent) < MAX_MESSAGES)
    @rule(data=st.data(), form=st.sampled_from(("id", "#", "")))
    def reply(self, data: st.DataObject, form: str) -> None:
        """A reply, naming what it answers by id, `#N` or `N`, is sent exactly when the replier
        may read that message (refused alike when it may not and when there is none), and
        joins its thread."""
        sender = self._pick(data)
        if sender is None:
            return
        parent = data.draw(st.sampled_from(self.room.sent))
        ref = parent.id if form == "id" else f"{form}{parent.seq}"
        peer = self._act(sender)
        may = may_read(
            Reader(sender.id),
            sender_id=parent.sender_id,
            recipient_id=parent.recipient_id,
            target=parent.target,
            channels=self.room.channels_of(sender.id),
        )
        send = self.hub.delivery.send(peer, to=BROADCAST, content=self._word(), reply_to=ref)
        try:
            receipt = self._run(send)
        except NotFound:
            assert not may, (sender, parent)
            return
        assert may, (sender, parent)
        others = {i.id for i in self.room.live() if i is not sender}
        self._routed(receipt, sender, BROADCAST, None, others, thread=parent.thread)

    @rule(data=st.data(), to=st.sampled_from((BROADCAST, *CHANNELS)))
    def ask(self, data: st.DataObject, to: str) -> None:
        """A form to the operator, for `all` or a channel the asker is in."""
        asker = self._pick(data)
        if asker is None or (to != BROADCAST and asker.id not in self.room.members.get(to, ())):
            return
        self.n += 1
        field = {"key": "go", "type": "radio", "options": ["yes", "no"]}
        peer = self._act(asker)
        form = self._run(self.hub.forms.ask(peer, f"question {self.n}", [field], to=to))
        self.room.forms[form.id] = (asker.id, to, False)

    @rule(data=st.data())
    def operator_answers(self, data: st.DataObject) -> None:
        """The operator answers a pending form: a decision for its audience, on the ledger."""
        pending = sorted(f for f, (_, _, done) in self.room.forms.items() if not done)
        if not pending:
            return
        form_id = data.draw(st.sampled_from(pending))
        self._run(self.hub.forms.answer(form_id, {"go": "yes"}))
        asker, to, _ = self.room.forms[form_id]
        self.room.forms[form_id] = (asker, to, True)

    @rule(data=st.data())
    def receive(self, data: st.DataObject) -> None:
        """An inbox hands out only what was routed to its identity."""
        ident = self._pick(data)
        if ident is None:
            return
        peer = self._act(ident)
        got = self._run(self.hub.delivery.receive(peer, wait=0, limit=100))
        if got.deliveries:
            self._run(self.hub.delivery.ack(peer, seqs=[d.message.seq for d in got.deliveries]))
        ours = {s.id: s for s in self.room.sent}
        for d in got.deliveries:
            sent = ours.get(d.message.id)
            if sent is not None:
                assert ident.id in sent.audience, (ident, d.message)

    # --- the property ------------------------------------------------------------------------
    @invariant()
    def readers_read_only_what_they_may(self) -> None:
        if self.n and self.n % 4 == 0:  # every few messages: each check is many reads
            self._check()

    def _check(self) -> None:
        for ident in self.room.live():
            self._check_reader(ident)

    def _check_reader(self, ident: Ident) -> None:
        room, reader = self.room, Reader(ident.id)
        peer = self._run(self.hub.registry.by_token(hash_token(ident.token)))
        assert peer is not None
        assert peer.id == ident.id
        mine = room.channels_of(ident.id)
        expected = {
            s.id
            for s in room.sent
            if may_read(
                reader,
                sender_id=s.sender_id,
                recipient_id=s.recipient_id,
                target=s.target,
                channels=mine,
            )
        }
        for s in room.sent:  # only what it was delivered, sent, or reads as a member
            if s.id in expected:
                assert (
                    ident.id in s.audience
                    or s.sender_id == ident.id
                    or s.target == BROADCAST
                    or s.target in mine
                ), (ident, s)
        found = self._run(self.hub.search.search(peer, WORD, order="recent", limit=50))
        assert {h.message.id for h in found.hits} == expected, ident
        exported = self._run(self.hub.history.readable_after(peer, 0, 1000))
        ours = {s.id for s in room.sent}
        assert {m.id for m in exported if m.id in ours} == expected, ident
        for thread in {s.thread for s in room.sent}:
            readable = [s for s in room.sent if s.thread == thread and s.id in expected]
            try:
                summary = self._run(self.hub.search.thread_summary(peer, thread, model=False))
            except NotFound:
                assert not readable, (ident, thread)
            else:
                assert summary.digest.messages == len(readable), (ident, thread)
        for task_id, (sender_id, worker_id) in room.tasks.items():
            sees = may_see_task(reader, sender_id=sender_id, worker_id=worker_id)
            try:
                self._run(self.hub.tasks.status(peer, task_id))
            except NotFound:
                assert not sees, (ident, task_id)
            else:
                assert sees, (ident, task_id)
        forms = {f.id for f in self._run(self.hub.forms.visible(peer))}
        assert forms == {
            f
            for f, (asker, to, done) in room.forms.items()
            if not done and may_see_form(reader, asker_id=asker, audience=to, channels=mine)
        }, ident
        decided = self._run(self.hub.decisions.visible(peer, 200))
        answered = {f: to for f, (_, to, done) in room.forms.items() if done}
        seen = {d.record["caucus"]["form_id"] for d in decided if "caucus" in d.record}
        assert seen == {f for f, to in answered.items() if to == BROADCAST or to in mine}, ident
        listed = {c.name for c in self._run(self.hub.channels.visible(peer))}
        assert listed == {
            c
            for c in room.members
            if may_see_channel(reader, private=c in room.private, member=c in mine)
        }


SETTINGS = {
    "sqlite": settings(
        max_examples=40,
        stateful_step_count=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        database=None,
    ),
    "postgres": settings(
        max_examples=15,
        stateful_step_count=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        database=None,
    ),
}


def test_every_reader_reads_only_what_it_may(backend: str, request: pytest.FixtureRequest) -> None:
    factory = staticmethod(engine_factory(backend, request))
    machine = type("WhoReadsHere", (WhoReads,), {"make_engine": factory})
    case = machine.TestCase
    case.settings = SETTINGS[backend]
    case().runTest()
