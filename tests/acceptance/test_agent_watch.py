"""Resource watches: an agent watches resources of `@modelcontextprotocol/server-everything`
(which, once toggled, reports its subscribed resources updated every 5 s), each update runs a
turn, an unchanged one is dropped where only changes count, bursts fold into one notice, and
the watches survive a restart through --watch-state (told in the On Start turn)."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

from caucus.models.mcp_tools import McpTools
from caucus.runtime.orchestrator import Notice
from caucus.runtime.tools.resources import WatchManager
from caucus.testing import Call, FakeOpenAI, Say, last_user, serve_fake, tool_messages
from tests.acceptance.test_agent_cli import start
from tests.nodebin import node_bin
from tests.waiting import eventually, within

DOC = "demo://resource/static/document/architecture.md"
OTHER = "demo://resource/static/document/features.md"


def model(request: dict[str, Any]) -> list[Any]:
    said, done = last_user(request), tool_messages(request)
    if "prompt:on-start" in said:
        if "Watches restored" in said and not done:
            return [Call("toggle-subscriber-updates")]  # a new server process: updates again
        if "Watches restored" in said:
            return [Say("resumed")]
        steps = [
            Call("watch_resource", {"uri": DOC, "debounce": 0.5}),
            Call("watch_resource", {"uri": OTHER, "changes_only": True, "debounce": 0.5}),
            Call("toggle-subscriber-updates"),
        ]
        return [steps[len(done)]] if len(done) < len(steps) else [Say("watching")]
    if "changed. It now reads" in said:
        return [Say("noted the change")]
    return [Say("ok")]


async def test_watches_run_turns_drop_unchanged_and_survive_a_restart(tmp_path: Path) -> None:
    everything = node_bin("mcp-server-everything")
    state = tmp_path / "watches.json"
    prompt = tmp_path / "p.md"
    prompt.write_text("You watch documents.\n# On Start\nStart watching.\n", "utf-8")
    async with serve_fake(FakeOpenAI(model)) as url:
        flags = ("--model", "m", "--base-url", f"{url}/v1", "--prompt", str(prompt))
        watch = ("--mcp-stdio", str(everything), "--watch-state", str(state))
        watch += ("--allow", "toggle-subscriber-updates")  # no hub to approve it: allowed
        agent = await start(*flags, *watch, cwd=tmp_path)
        first = await agent.until("ThreadRunComplete")
        assert first["reply"] == "watching"
        # Updates every 5 s: each one of DOC's is a notice and a turn; OTHER never changes.
        notice = await agent.until("NoticeReceived", 2)
        assert notice["source"] == f"resource:{DOC}"
        await agent.until("NoticeReceived", 3)
        sources = {e["source"] for e in agent.events if e["event"] == "NoticeReceived"}
        assert sources == {"prompt:on-start", f"resource:{DOC}"}
        agent.proc.send_signal(signal.SIGTERM)  # as a stop: the run under way finishes
        code, stderr = await agent.finish()
        assert code == 0, stderr
        saved = json.loads(state.read_text("utf-8"))
        assert [w["uri"] for w in saved["watches"]] == [DOC, OTHER]
        assert state.stat().st_mode & 0o777 == 0o600

        again = await start(*flags, *watch, cwd=tmp_path)
        resumed = await again.until("ThreadRunComplete")
        assert resumed["reply"] == "resumed"
        folded = [e for e in again.events if e["event"] == "NoticeReceived"]
        assert [e["source"] for e in folded] == ["prompt:on-start", "watch-state"]
        assert DOC in folded[1]["text"]
        woke = await again.until("NoticeReceived", 3)
        assert woke["source"] == f"resource:{DOC}"
        again.proc.send_signal(signal.SIGTERM)
        code, stderr = await again.finish()
        assert code == 0, stderr


async def test_a_burst_of_updates_is_one_notice_and_an_unchanged_resource_none(
    tmp_path: Path,
) -> None:
    tools = McpTools()
    await tools.start_stdio([str(node_bin("mcp-server-everything"))])
    told: list[Notice] = []
    arrived = asyncio.Event()

    def notify(notice: Notice) -> None:
        told.append(notice)
        arrived.set()

    watches = WatchManager(tools, notify, state=tmp_path / "w.json")
    try:
        assert await watches.watch(DOC, changes_only=False, debounce=0.3) == f"watching {DOC}"
        assert await watches.watch(OTHER, changes_only=True, debounce=0.3) == f"watching {OTHER}"
        for _ in range(5):  # a burst, as a busy server reports it
            watches.updated(DOC)
            watches.updated(OTHER)
        await within(arrived.wait(), 10, "the notice")
        # All ten updates accounted for: the burst folded (4 + 4), OTHER read and unchanged (1),
        # one notice for DOC; no other can come of them.
        await eventually(lambda: watches.dropped == 4 + 4 + 1, what="the burst to settle")
        assert [n.source for n in told] == [f"resource:{DOC}"]
        assert "Everything Server" in told[0].text
        assert await watches.unwatch(DOC) == f"no longer watching {DOC}"
        watches.updated(DOC)  # not watched any more: nothing
        assert list(watches.watches) == [OTHER]
    finally:
        await watches.close()
        await tools.close()
