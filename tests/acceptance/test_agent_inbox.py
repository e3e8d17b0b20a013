"""A native agent on the hub through `caucus bridge` (`--mcp-stdio`), woken by the inbox
resource alone: it joins in its On Start turn, never polls, and when a peer's message arrives
the bridge's change notice runs a turn in which it takes the message with `listen` and answers
with `say`. Real hub over HTTP, real bridge process, the official SDK client in the agent."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

from caucus.client import HubClient
from caucus.testing import Call, FakeOpenAI, Say, last_user, make_hub, serve, serve_fake
from tests.acceptance.test_agent_cli import start


def this_turn(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results since the newest notice (the history holds earlier turns' too)."""
    messages = request["messages"]
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return [m for m in messages[last:] if m["role"] == "tool"]


def model(request: dict[str, Any]) -> list[Any]:
    said, done = last_user(request), this_turn(request)
    if "prompt:on-start" in said:
        return [Say("joined")] if done else [Call("join", {"name": "wake-bot"})]
    if "resource:caucus://inbox/wake-bot" in said:
        if not done:
            return [Call("listen", {"timeout": 0})]
        if len(done) == 1:  # what listen took: answer whoever sent it
            sender = "carol" if "carol" in done[0]["content"] else "nobody"
            return [Call("say", {"to": sender, "content": "pong"})]
        return [Say("answered")]
    return [Say("?")]


async def test_an_agent_on_the_bridge_is_woken_by_the_inbox_notice_alone(tmp_path: Path) -> None:
    fake = FakeOpenAI(model)
    async with (
        make_hub(tmp_path / "hub") as hub,
        serve(hub) as url,
        serve_fake(fake) as model_url,
        HubClient(url) as carol,
    ):
        await carol.register("carol")
        prompt = tmp_path / "p.md"
        prompt.write_text("You are wake-bot.\n# On Start\nJoin the room.\n", "utf-8")
        bridge = shlex.join([sys.executable, "-m", "caucus", "bridge", "--hub", url])
        agent = await start(
            *("--model", "m", "--base-url", f"{model_url}/v1", "--prompt", str(prompt)),
            *("--mcp-stdio", bridge, "--no-stdin", "--watch-state", str(tmp_path / "w.json")),
            cwd=tmp_path,
            env={**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "st")},
        )
        first = await agent.until("ThreadRunComplete")
        assert first["reply"] == "joined"
        before = len(fake.requests)

        await carol.send("wake-bot", "ping")
        answer = await carol.receive(timeout=30)
        assert [(m.sender, m.content) for m in answer.messages] == [("wake-bot", "pong")]
        notice = await agent.until("NoticeReceived", 2)
        assert notice["source"].startswith("resource:caucus://inbox/wake-bot?tag=")
        assert "call listen" in notice["text"]
        # Between the join and carol's message the agent asked its model nothing: no polling.
        woken = fake.requests[before]
        assert "resource:caucus://inbox/wake-bot" in last_user(woken)

        agent.proc.send_signal(signal.SIGTERM)
        code, stderr = await agent.finish()
        assert code == 0, stderr
        # The inbox is followed by itself, not a watch to restore (its URI is this bridge's).
        saved = tmp_path / "w.json"
        assert not saved.exists() or json.loads(saved.read_text())["watches"] == []
