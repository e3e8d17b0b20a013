"""`caucus watch`: exits after the first batch, on a dead session with one line, loses nothing."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from caucus.client import HubClient
from caucus.mcp.watch import EXPIRED, Session, write_session
from caucus.operator_client import OperatorClient
from tests.conftest import ClientFactory, eventually
from tests.injection import CORPUS, holds


async def launch(session_file: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "caucus",
        "watch",
        "--session",
        str(session_file),
        "--poll",
        "5",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def finish(proc: asyncio.subprocess.Process) -> tuple[int, str, str]:
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def session_for(
    connect: ClientFactory, url: str, name: str, tmp: Path
) -> tuple[Path, HubClient]:
    client = await connect(name)
    assert client.token is not None
    path = tmp / f"{name}.session"
    write_session(path, Session(url, name, client.token))
    return path, client


async def test_the_watcher_prints_the_first_batch_acknowledges_it_and_exits(
    url: str, connect: ClientFactory, tmp_path: Path
) -> None:
    path, bob = await session_for(connect, url, "bob", tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600
    alice = await connect("alice")
    proc = await launch(path)

    async def parked() -> bool:
        return (await alice.ping("bob")).listening

    await eventually(parked, what="the watcher parked")
    sent = await alice.send("bob", "wake up, bob")
    code, out, _ = await finish(proc)
    assert code == 0
    holds(out.rstrip("\n"), [(sent.seq, "alice", "you", "chat", "wake up, bob")])
    assert (await bob.peek()).pending == 0  # what it printed, it acknowledged


async def test_a_dead_session_prints_one_line_and_exits_1(
    url: str, connect: ClientFactory, tmp_path: Path
) -> None:
    bob = await connect("bob")
    path, _ = await session_for(connect, url, "carol", tmp_path)
    assert bob.token is not None
    write_session(path, Session(url, "carol", "cau_not-a-live-token"))
    code, out, _ = await finish(await launch(path))
    assert code == 1
    assert out.strip() == EXPIRED


async def test_nothing_is_lost_between_launches_even_when_one_is_killed(
    url: str, connect: ClientFactory, tmp_path: Path
) -> None:
    path, _ = await session_for(connect, url, "bob", tmp_path)
    alice = await connect("alice")
    for i in range(3):
        await alice.send("bob", f"m{i}")  # nobody is watching yet
    code, first, _ = await finish(await launch(path))
    assert code == 0
    # A watcher killed while it waits must not take the next message with it.
    doomed = await launch(path)

    async def parked() -> bool:
        return (await alice.ping("bob")).listening

    await eventually(parked, what="the watcher parked")
    doomed.kill()
    await doomed.wait()
    await eventually(lambda: _not(parked), what="the dead watcher's poll ended")
    await alice.send("bob", "m3")
    code, second, _ = await finish(await launch(path))
    assert code == 0
    seen = [line for line in (first + second).splitlines() if line.startswith("m")]
    assert seen == ["m0", "m1", "m2", "m3"]


async def _not(check: Callable[[], Awaitable[bool]]) -> bool:
    return not await check()


async def test_the_operator_stop_gets_a_plain_line(
    url: str, connect: ClientFactory, tmp_path: Path, operator: OperatorClient
) -> None:
    path, _ = await session_for(connect, url, "bob", tmp_path)
    await operator.stop("wrap up")
    code, out, _ = await finish(await launch(path))
    assert code == 0
    assert out.splitlines()[0] == "[caucus] the operator says: stop"


async def test_the_injection_corpus_holds_through_send_and_the_watcher(
    url: str, connect: ClientFactory, tmp_path: Path
) -> None:
    path, _ = await session_for(connect, url, "bob", tmp_path)
    mallory = await connect("mallory")
    expected = []
    for content in CORPUS:
        if not content:
            continue  # the hub refuses empty content
        result = await mallory.send("bob", content)
        expected.append((result.seq, "mallory", "you", "chat", content))
    code, out, _ = await finish(await launch(path))
    assert code == 0
    holds(out.rstrip("\n"), expected)
