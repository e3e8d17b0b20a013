"""Teammates on demand (issue 34): an agent the operator granted `spawn` starts a native agent
with a prompt, one of the operator's model profiles and tools from the operator's list.

Nothing about a spawn is the spawner's to choose beyond those: the model's server, its key and
each tool's command line come from the hub's settings, never from the request. The counts
that bound a spawn (the spawner's grant, the room's `spawn_room_max`) are read and the spawn
stored in one unit, processes sharing a PostgreSQL room taking turns at it, so two racing
requests cannot both take the last place. The teammate is launched by the launcher (the
console's own, so the operator sees and stops it there), chained onto the ledger before the
spawner hears it succeeded (a spawn that cannot be recorded is stopped and refused), and
stopped when its spawner leaves or is kicked. A teammate runs in the hub process that launched
it; a stop asked of another process reaches it by the database's signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, cast

from caucus.clock import Clock
from caucus.config import Settings, SpawnProfile
from caucus.domain.events import Event, PeerLeft, TeammatesChanged
from caucus.domain.launches import Launched
from caucus.domain.names import check_peer_name
from caucus.domain.peers import Peer
from caucus.domain.spawns import (
    KEPT_ENDED,
    PROMPT_MAX,
    TEAMMATES_MAX,
    TOOLS_MAX,
    EndedBy,
    Profile,
    Spawn,
    SpawnGrant,
    Standing,
    spawn_record,
)
from caucus.errors import (
    CapTeammates,
    CaucusError,
    InvalidRequest,
    NotFound,
    SpawnNotApproved,
    SpawnNotGranted,
)
from caucus.services.decisions import DecisionLog
from caucus.services.launcher import STOP_GRACE, Launcher, LaunchSpec
from caucus.services.notifier import Notifier
from caucus.services.registry import Registry
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

log = logging.getLogger(__name__)

SPAWN_SIGNAL = "spawn-stop"  # another process is asked to stop a teammate it runs
ELSEWHERE_SLACK = 3.0  # seconds past the stop grace another process has to say it ended
TURN_KEY = "spawns"  # the room-state row processes lock to take turns at the counts


@dataclass(frozen=True, slots=True)
class SpawnAsk:
    """What a spawner asks for."""

    prompt: str
    profile: str
    tools: Sequence[str] = ()
    name: str | None = None


class SpawnService:
    def __init__(
        self,
        db: Engine,
        launcher: Launcher,
        decisions: DecisionLog,
        registry: Registry,
        notifier: Notifier,
        clock: Clock,
        settings: Settings,
    ) -> None:
        self._db = db
        self._launcher = launcher
        self._decisions = decisions
        self._registry = registry
        self._notifier = notifier
        self._clock = clock
        self._settings = settings
        self._process = secrets.token_hex(6)  # the teammates this process runs carry it
        self._local: dict[str, str] = {}  # launch id -> spawn id, for those running here
        self._stopping: dict[str, EndedBy] = {}  # spawn id -> who asked
        self._tasks: set[asyncio.Task[None]] = set()
        self._told: dict[str, asyncio.Future[None]] = {}  # stops asked of other processes
        launcher.on_end(self._ended)
        notifier.subscribe(self._on_event)

    async def start(self) -> None:
        """A hub alone on its database ran every teammate the room counts as running, and its
        children did not outlive it: none runs now."""
        if not self._db.shared:
            now = self._clock.now()
            await self._db.write(lambda r: r.spawns.end_running("hub-stopped", now))

    async def stop(self) -> None:
        for task in list(self._tasks):
            with contextlib.suppress(Exception):
                await task

    # --- the operator's grants --------------------------------------------------------------
    async def grant(self, name: str, teammates: int) -> SpawnGrant:
        if not 1 <= teammates <= TEAMMATES_MAX:
            raise InvalidRequest(f"teammates is 1-{TEAMMATES_MAX}", field="teammates")
        peer = await self._registry.find(name)
        now = self._clock.now()
        await self._db.write(lambda r: r.spawns.grant(peer.id, peer.name, teammates, now))
        self._notifier.emit(TeammatesChanged(now, "granted", peer.name))
        return SpawnGrant(peer.name, teammates, now)

    async def revoke(self, name: str) -> bool:
        """Take the grant back (the teammates running go on until stopped); False: there was
        none."""
        peer = await self._registry.find(name)
        revoked = await self._db.write(lambda r: r.spawns.revoke(peer.id))
        if revoked:
            self._notifier.emit(TeammatesChanged(self._clock.now(), "revoked", peer.name))
        return revoked

    async def grants(self) -> list[SpawnGrant]:
        return await self._db.read(lambda r: r.spawns.grants())

    # --- what may be spawned ----------------------------------------------------------------
    async def standing(self, peer: Peer | None) -> Standing:
        """What `peer` may spawn now and its teammates; None: the room's (the operator's)."""

        def read(r: Repos) -> Standing:
            return Standing(
                grant=r.spawns.grant_of(peer.id) if peer is not None else None,
                running=r.spawns.running(peer.id) if peer is not None else 0,
                room_running=r.spawns.running(),
                room_max=self._settings.spawn_room_max,
                profiles=[
                    Profile(name, p.backend, p.model, p.description)
                    for name, p in sorted(self._settings.spawn_profiles.items())
                ],
                tools=sorted(self._settings.spawn_tools),
                teammates=r.spawns.recent(KEPT_ENDED, peer.id if peer is not None else None),
                why_not=self._launcher.why_not(),
                grants=r.spawns.grants() if peer is None else [],
            )

        return await self._db.read(read)

    async def get(self, spawn_id: str, by: Peer | None = None) -> Spawn:
        spawn = await self._db.read(lambda r: r.spawns.get(spawn_id))
        if spawn is None or (by is not None and spawn.spawner_id != by.id):
            raise NotFound(f"no teammate {spawn_id!r} of yours", spawn_id=spawn_id)
        return spawn

    # --- spawning ---------------------------------------------------------------------------
    def _take_place(self, r: Repos, peer: Peer, spawn: Spawn) -> None:
        """Within the turn every spawn takes: the grant still stands, the name is free, and
        the caller's and the room's teammates are within their caps; then the spawn is kept."""
        room_max = self._settings.spawn_room_max
        r.room.locked(TURN_KEY, 0)
        grant = r.spawns.grant_of(peer.id)
        if grant is None:  # revoked since the check before the turn
            raise self._not_granted(peer)
        r.peers.check_name_free(spawn.name)
        if (mine := r.spawns.running(peer.id)) >= grant.teammates:
            raise CapTeammates(
                f"{peer.name} has {mine} teammates running, as many as its grant allows: "
                "stop one first",
                running=mine,
                limit=grant.teammates,
            )
        if (room := r.spawns.running()) >= room_max:
            raise CapTeammates(
                f"the room has {room} spawned teammates running, as many as it allows "
                "(spawn_room_max): stop one first",
                running=room,
                limit=room_max,
            )
        r.spawns.insert(spawn)

    async def spawn(self, peer: Peer, ask: SpawnAsk, hub_url: str) -> Spawn:
        """Refusals in the order that sends the caller to the right fix (docs/api.md): the
        hub's launcher, the caller's grant, the operator's lists, the ask itself, then room."""
        self._launcher.check_enabled()
        if await self._db.read(lambda r: r.spawns.grant_of(peer.id)) is None:
            raise self._not_granted(peer)
        profile = self._profile(ask.profile)
        commands = self._commands(ask.tools)
        prompt = _prompt(ask.prompt)
        name = check_peer_name(ask.name) if ask.name else f"{peer.name}-{secrets.token_hex(2)}"
        now = self._clock.now()
        spawn = Spawn(
            id="sp_" + secrets.token_hex(8),
            spawner_id=peer.id,
            spawner=peer.name,
            name=name,
            profile=ask.profile,
            tools=tuple(dict.fromkeys(ask.tools)),
            prompt=prompt,
            process=self._process,
            launch_id=None,
            record=None,
            state="running",
            ended_by=None,
            exit_code=None,
            started_at=now,
            ended_at=None,
        )
        await self._db.write(lambda r: self._take_place(r, peer, spawn))
        spec = LaunchSpec(
            name=name,
            backend=profile.backend,
            model=profile.model,
            base_url=profile.base_url,
            api_key_env=profile.api_key_env,
            prompt=prompt,
            tools=commands,
            description=f"a teammate {peer.name} spawned",
            spawned_by=peer.name,
        )
        try:
            launched = await self._launcher.launch(spec, hub_url)
        except CaucusError:
            await self._end(spawn.id, "failed", None)
            raise
        self._local[launched.launch_id] = spawn.id
        record = spawn_record(spawn, profile.model_dump(exclude_none=True), now=now)
        try:
            _, sealed = await self._decisions.record_dict(record)
        except (CaucusError, OSError):
            self._stopping[spawn.id] = "failed"
            await self._launcher.stop(launched.launch_id)
            raise
        digest = str(sealed["hash"])
        await self._db.write(lambda r: r.spawns.launched(spawn.id, launched.launch_id, digest))
        self._notifier.emit(TeammatesChanged(self._clock.now(), "spawned", peer.name, name))
        return await self.get(spawn.id)

    @staticmethod
    def _not_granted(peer: Peer) -> SpawnNotGranted:
        return SpawnNotGranted(
            f"{peer.name} has no spawn grant: only the operator gives one (the "
            "console's roster, or POST /operator/peers/{name}/spawn-grant)"
        )

    def _profile(self, name: str) -> SpawnProfile:
        profiles = self._settings.spawn_profiles
        if name not in profiles:
            offered = ", ".join(sorted(profiles)) or "none (the operator has approved none)"
            raise SpawnNotApproved(
                f"profile {name!r} is not on the operator's list; approved: {offered}",
                field="profile",
            )
        return profiles[name]

    def _commands(self, tools: Sequence[str]) -> list[str]:
        if len(tools) > TOOLS_MAX:
            raise InvalidRequest(f"at most {TOOLS_MAX} tools", field="tools")
        approved = self._settings.spawn_tools
        unknown = [t for t in tools if t not in approved]
        if unknown:
            offered = ", ".join(sorted(approved)) or "none"
            raise SpawnNotApproved(
                f"not on the operator's list of tools: {', '.join(unknown)}; approved: {offered}",
                field="tools",
            )
        return [approved[t] for t in dict.fromkeys(tools)]

    # --- stopping ---------------------------------------------------------------------------
    async def stop_teammate(self, spawn_id: str, by: Peer | None) -> Spawn:
        """Stop a teammate: its spawner may, and the operator (`by` None). Returns once it has
        ended when it runs in this process; another process is asked to stop it."""
        spawn = await self.get(spawn_id, by)
        if spawn.state == "running":
            await self._stop(spawn, "spawner" if by is not None else "operator")
        return await self.get(spawn_id)

    async def _stop(self, spawn: Spawn, why: EndedBy) -> None:
        if spawn.process != self._process:
            await self._stop_elsewhere(spawn.id, why)
            return
        self._stopping[spawn.id] = why
        if spawn.launch_id is None:  # launching still, or its launch failed
            return
        try:
            await self._launcher.stop(spawn.launch_id)
        except NotFound:  # the launcher forgot it: it ended long ago
            await self._end(spawn.id, why, None)

    async def _stop_elsewhere(self, spawn_id: str, why: EndedBy) -> None:
        """Ask the process that runs it, and wait for its word that it ended; a process that
        does not answer within the stop grace is gone (it died without closing, and its
        children with it), so the row is ended here rather than counted for ever."""
        told = self._told.setdefault(spawn_id, asyncio.get_running_loop().create_future())
        try:
            await self._db.signal(f"{SPAWN_SIGNAL} {spawn_id} {why}")
            await asyncio.wait_for(asyncio.shield(told), STOP_GRACE + ELSEWHERE_SLACK)
        except TimeoutError:
            await self._end(spawn_id, why, None)
        finally:
            if self._told.get(spawn_id) is told:
                del self._told[spawn_id]

    def signalled(self, arg: str) -> None:
        """Another process asked this one to stop a teammate (`SPAWN_SIGNAL`), or said one
        ended (`ENDED_SIGNAL`)."""
        spawn_id, _, why = arg.partition(" ")
        if why == "ended":
            told = self._told.get(spawn_id)
            if told is not None and not told.done():
                told.set_result(None)
            return
        if spawn_id in self._local.values() and why in ("spawner", "operator", "spawner-left"):
            self._later(self._stop_here(spawn_id, cast(EndedBy, why)))

    async def _stop_here(self, spawn_id: str, why: EndedBy) -> None:
        spawn = await self._db.read(lambda r: r.spawns.get(spawn_id))
        if spawn is not None and spawn.state == "running":
            await self._stop(spawn, why)

    async def _ended(self, agent: Launched) -> None:
        spawn_id = self._local.pop(agent.launch_id, None)
        if spawn_id is None:
            return  # launched by the operator, not spawned
        # Not stopped by anyone: it exited by itself, or ended with the hub shutting down.
        why = self._stopping.pop(spawn_id, "hub-stopped" if self._launcher.closed else "exited")
        await self._end(spawn_id, why, agent.exit_code)

    async def _end(self, spawn_id: str, why: EndedBy, exit_code: int | None) -> None:
        now = self._clock.now()
        spawn = await self._db.read(lambda r: r.spawns.get(spawn_id))
        if await self._db.write(lambda r: r.spawns.end(spawn_id, why, exit_code, now)):
            spawner = spawn.spawner if spawn is not None else ""
            name = spawn.name if spawn is not None else None
            self._notifier.emit(TeammatesChanged(now, "ended", spawner, name))
            if self._db.shared:  # a process that asked for this stop waits for the word
                await self._db.signal(f"{SPAWN_SIGNAL} {spawn_id} ended")

    def _on_event(self, event: Event) -> None:
        if isinstance(event, PeerLeft) and event.reason in ("left", "kicked"):
            self._later(self._spawner_gone(event.name))

    async def _spawner_gone(self, spawner: str) -> None:
        teammates = await self._db.read(lambda r: r.spawns.running_of(spawner))
        for spawn in teammates:
            await self._stop(spawn, "spawner-left")

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a teammate could not be stopped", exc_info=task.exception())

    # --- upkeep -----------------------------------------------------------------------------
    async def sweep(self) -> None:
        """Forget teammates that ended longer ago than the room keeps finished things."""
        before = self._clock.now() - self._settings.retention_age
        await self._db.write(lambda r: r.spawns.forget(before))


def _prompt(given: str) -> str:
    prompt = given.strip()
    if not prompt:
        raise InvalidRequest("prompt is empty: say what the teammate is for", field="prompt")
    if len(prompt) > PROMPT_MAX:
        raise InvalidRequest(f"prompt is at most {PROMPT_MAX} characters", field="prompt")
    return prompt
