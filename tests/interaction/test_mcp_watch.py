"""A watcher for every connection: `/mcp` names one too, through a 0600 file for a host on the
hub's machine and a single-use ticket for one elsewhere; the bridge's holds a key, not its
token. Each is driven by the official MCP SDK client and run as the host would run it."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

from mcp import Client

from caucus.client import HubClient
from caucus.mcp.watch import Ending
from caucus.testing import make_hub, serve
from tests.conftest import ClientFactory, eventually
from tests.mcptools import Session, call
from tests.waiting import within


async def run_watcher(command: str) -> tuple[int, str]:
    argv = shlex.split(command)
    if argv[0] == "caucus":  # a ticket's command names the host's own caucus
        argv = [sys.executable, "-m", "caucus", *argv[1:]]
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, _ = await within(proc.communicate(), 60, "the process to end")
    assert proc.returncode is not None
    return proc.returncode, out.decode()


async def wake(command: str, sender: HubClient, name: str) -> tuple[int, str]:
    watcher = asyncio.ensure_future(run_watcher(command))

    async def parked() -> bool:
        return (await sender.ping(name)).listening

    await eventually(parked, what="the watcher parked")
    await sender.send(name, "wake up")
    return await watcher


async def test_mcp_on_this_machine_names_a_private_session_file(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    async with Client(f"{url}/mcp", mode="legacy") as bob:
        joined = await call(bob, "join", name="bob")
        watch = await call(bob, "watch_command")
        assert watch["via"] == "session_file"
        assert joined["watch"] == watch["command"]
        argv = shlex.split(watch["command"])
        session_file = Path(argv[argv.index("--session") + 1])
        assert session_file.stat().st_mode & 0o777 == 0o600
        assert "cau_" not in session_file.read_text()  # a watch key, never the token
        code, out = await wake(watch["command"], alice, "bob")
        assert (code, out.splitlines()[0]) == (0, Ending.MESSAGES.line("1 from alice"))
        await call(bob, "leave")
        assert not session_file.exists()


async def test_mcp_hands_a_ticket_to_a_host_that_cannot_read_its_files(tmp_path: Path) -> None:
    async with (
        make_hub(tmp_path, watch_files=False) as hub,
        serve(hub) as url,
        HubClient(url) as alice,
    ):
        await alice.register("alice")
        async with Client(f"{url}/mcp") as client:  # 2026-07-28: no session, a handle
            bob = Session(client)
            joined = await bob.call("join", name="bob")
            assert "--ticket" in (joined["watch"] or "")
            watch = await bob.call("watch_command")
            assert watch["via"] == "ticket"
            code, out = await wake(watch["command"], alice, "bob")
            assert (code, out.splitlines()[0]) == (0, Ending.MESSAGES.line("1 from alice"))
            code, out = await run_watcher(watch["command"])  # a ticket works once
            assert (code, out.strip()) == (6, Ending.TICKET_REJECTED.line())
            # The ticket join handed out was voided by watch_command's.
            assert joined["watch"] != watch["command"]
            code, out = await run_watcher(joined["watch"])
            assert code == 6


async def test_a_listen_over_mcp_while_the_watcher_runs_is_told_and_loses_nothing(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    async with Client(f"{url}/mcp", mode="legacy") as bob:
        await call(bob, "join", name="bob")
        watch = await call(bob, "watch_command")
        watcher = asyncio.ensure_future(run_watcher(watch["command"]))

        async def parked() -> bool:
            return (await alice.ping("bob")).listening

        await eventually(parked, what="the watcher parked")
        listening = asyncio.ensure_future(call(bob, "listen", timeout=10))
        code, out = await watcher
        assert (code, out.strip()) == (5, Ending.DISPLACED.line())
        sent = await alice.send("bob", "to the listener")
        heard = await listening
        assert heard["displaced_watcher"] is True
        assert [m["seq"] for m in heard["messages"]] == [sent.seq]


async def test_a_newcomers_backlog_is_catch_up_not_a_wake_up(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    await alice.announce("release at noon", subject="release")
    async with Client(f"{url}/mcp", mode="legacy") as bob:
        joined = await call(bob, "join", name="bob")
        assert "release at noon" in (joined["catch_up"] or "")
        assert "<<<caucus-data" in joined["catch_up"]  # wrapped as untrusted data
        assert (await call(bob, "whoami"))["pending"] == 0
        # The watcher is woken by the next message, not by yesterday's news.
        code, out = await wake(joined["watch"], alice, "bob")
        assert (code, out.splitlines()[0]) == (0, Ending.MESSAGES.line("1 from alice"))
        assert "release at noon" not in out
        # Coming back is not arriving: a resumed identity's inbox stays where it is.
        again = await call(bob, "join", name="bob")
        assert "catch_up" not in again
