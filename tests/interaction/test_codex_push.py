"""`caucus watch --push codex` against a scripted stand-in for the Codex app-server's control
socket (`caucus.testing.FakeCodex`): idle starts a turn, busy holds then sends, the operator
is steered in, an approval holds everything, a daemon that is gone falls back to printing,
and nothing is acknowledged before the daemon accepted it."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from caucus.client import HubClient
from caucus.mcp.codex import TRIGGER
from caucus.mcp.watch import Ending, Session, write_session
from caucus.operator_client import OperatorClient
from caucus.testing import FakeCodex
from tests.conftest import ClientFactory, eventually
from tests.waiting import within

THREAD = "thr_caucus_test"


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A Unix socket path must be short (108 bytes): pytest's own tmp_path can be longer."""
    where = Path(tempfile.mkdtemp(prefix="cx", dir="/tmp"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
async def codex(short_dir: Path) -> AsyncIterator[FakeCodex]:
    async with FakeCodex(short_dir / "c.sock", THREAD) as fake:
        yield fake


async def watcher(
    url: str, bob: HubClient, where: Path, socket: Path
) -> asyncio.subprocess.Process:
    key = await bob.mint_watch_key()
    session_file = where / "bob.session"
    write_session(session_file, Session(url, "bob", key.key))
    env = dict(os.environ)
    env.update(
        CODEX_THREAD_ID=THREAD,
        CAUCUS_CODEX_SOCKET=str(socket),
        CAUCUS_PUSH_GAP="0.2",
        CAUCUS_PUSH_CAP="1",
    )
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "caucus",
        "watch",
        "--session",
        str(session_file),
        "--push",
        "codex",
        "--poll",
        "5",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )


@asynccontextmanager
async def attached(
    url: str, bob: HubClient, where: Path, codex: FakeCodex
) -> AsyncIterator[asyncio.subprocess.Process]:
    """bob's watcher, pushing to the stand-in, once it has attached to the thread."""
    proc = await watcher(url, bob, where, codex.path)
    try:
        await codex.wait_for("thread/resume")
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def pending(bob: HubClient) -> int:
    return (await bob.peek()).pending


async def test_an_idle_thread_gets_a_turn_acknowledged_only_once_accepted(
    url: str, connect: ClientFactory, codex: FakeCodex, short_dir: Path
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    async with attached(url, bob, short_dir, codex):
        await eventually(lambda: _listening(alice), what="the watcher parked")
        await alice.send("bob", "please rebase")
        await codex.wait_for("turn/start")
        turn = codex.calls("turn/start")[0]
        assert turn["threadId"] == THREAD
        assert turn["input"] == [{"type": "text", "text": TRIGGER}]  # the trusted trigger only
        context = turn["additionalContext"][0]
        assert context["type"] == "untrusted"
        assert "please rebase" in context["text"]
        assert "<<<caucus-data" in context["text"]
        await eventually(lambda: _zero(bob), what="acknowledged after the turn was accepted")


async def test_the_operator_is_steered_in_while_an_earlier_burst_is_held(
    url: str,
    connect: ClientFactory,
    codex: FakeCodex,
    short_dir: Path,
    operator: OperatorClient,
) -> None:
    """A busy thread holds the burst and the operator is steered in. Once the first steer is
    seen, alice's message (taken before the operator's) is held by the running turn whatever
    bursts the watcher made of them; the operator speaks again, and the watcher, still reading
    while it holds, steers that in too; the turn's end starts one with alice's message."""
    alice, bob = await connect("alice"), await connect("bob")
    async with attached(url, bob, short_dir, codex):
        turn = await codex.begin_turn()
        await eventually(lambda: _listening(alice), what="the watcher parked")
        await alice.send("bob", "when you are free")
        await operator.say("bob", "first: status report")
        await codex.wait_for("turn/steer")
        await operator.say("bob", "second: and the logs")
        await codex.wait_for("turn/steer", 2)
        steers = [c["input"][0]["text"] for c in codex.calls("turn/steer")]
        assert "first: status report" in steers[0]
        assert "second: and the logs" in steers[1]
        assert all("when you are free" not in text for text in steers)
        assert {c["expectedTurnId"] for c in codex.calls("turn/steer")} == {turn}
        assert codex.calls("turn/start") == []
        assert await pending(bob) == 3  # nothing acknowledged while alice's is held
        await codex.finish_turn()
        await codex.wait_for("turn/start")
        assert "when you are free" in codex.calls("turn/start")[0]["additionalContext"][0]["text"]
        await eventually(lambda: _zero(bob), what="all three acknowledged")


async def test_an_approval_holds_everything_even_the_operator(
    url: str,
    connect: ClientFactory,
    codex: FakeCodex,
    short_dir: Path,
    operator: OperatorClient,
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    async with attached(url, bob, short_dir, codex):
        await codex.begin_turn()
        await codex.ask_approval()
        await eventually(lambda: _listening(alice), what="the watcher parked")
        await operator.say("bob", "stop and report")
        await eventually(lambda: _taken(alice, bob), what="the watcher to take the message")
        assert codex.calls("turn/steer") == []
        assert codex.calls("turn/start") == []
        assert await pending(bob) == 1
        # A watcher that pushed into the waiting thread would have been refused and fallen back
        # to printing the message and ending: the steer after the approval proves it held.
        await codex.approve()  # the turn runs again: now the operator is steered in
        await codex.wait_for("turn/steer")
        assert len(codex.calls("turn/steer")) == 1
        assert codex.calls("turn/start") == []
        await eventually(lambda: _zero(bob), what="acknowledged after the steer")


async def test_a_daemon_that_is_gone_falls_back_to_printing(
    url: str, connect: ClientFactory, codex: FakeCodex, short_dir: Path
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await codex.stop()  # nothing listens on the socket
    proc = await watcher(url, bob, short_dir, codex.path)
    await eventually(lambda: _listening(alice), what="the watcher parked")
    await alice.send("bob", "printed instead")
    out, _ = await within(proc.communicate(), 30, "the process to end")
    assert proc.returncode == 0
    text = out.decode()
    assert text.splitlines()[0] == Ending.MESSAGES.line("1 from alice")
    assert "printed instead" in text
    assert await pending(bob) == 0


async def test_a_daemon_that_goes_away_midway_falls_back_too(
    url: str, connect: ClientFactory, codex: FakeCodex, short_dir: Path
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    proc = await watcher(url, bob, short_dir, codex.path)
    await codex.wait_for("thread/resume")
    await codex.begin_turn()
    await eventually(lambda: _listening(alice), what="the watcher parked")
    await alice.send("bob", "held, then printed")
    await eventually(lambda: _arrived(bob), what="the message arrived")
    await codex.stop()
    out, _ = await within(proc.communicate(), 30, "the process to end")
    assert proc.returncode == 0
    assert "held, then printed" in out.decode()
    assert await pending(bob) == 0


async def _listening(client: HubClient) -> bool:
    return (await client.ping("bob")).listening


async def _taken(alice: HubClient, bob: HubClient) -> bool:
    """The message waits unacknowledged and the watcher no longer listens: it holds it."""
    return await pending(bob) == 1 and not await _listening(alice)


async def _zero(bob: HubClient) -> bool:
    return await pending(bob) == 0


async def _arrived(bob: HubClient) -> bool:
    """The message is in bob's inbox (the watcher, parked on it, takes it at once)."""
    peek = await bob.peek()
    return peek.pending >= 1 and peek.last is not None
