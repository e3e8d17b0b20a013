"""`caucus agent --backend claude-cli`: the real Claude Code from npm, driven by the scripted
Messages API fake, runs the agent's turns; its MCP servers (server-everything) are Claude
Code's tools, and a thread's second turn resumes the Claude Code session of its first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from caucus.testing import FakeAnthropic, Text, ToolUse, result_text, serve_fake, tool_results
from tests.acceptance.test_agent_cli import start
from tests.nodebin import claude_env, node_bin


def model(request: dict[str, Any]) -> list[Any]:
    said = json.dumps(request.get("messages", []))
    results = tool_results(request)
    if "what was the sum" in said:
        return [Text("Earlier: 5." if "It is 5." in said else "I do not remember.")]
    if not results:
        return [Text("Adding."), ToolUse("mcp__s1__get-sum", {"a": 2, "b": 3})]
    return [Text(f"It is {result_text(results[-1]).rsplit(' ', 1)[-1]}")]


async def test_claude_code_runs_the_turns_with_the_agents_tools_and_keeps_the_thread(
    tmp_path: Path,
) -> None:
    claude = node_bin("claude")
    everything = node_bin("mcp-server-everything")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    prompt = tmp_path / "prompt.md"
    prompt.write_text("You add numbers.\n", "utf-8")
    fake = FakeAnthropic(model)
    async with serve_fake(fake) as url:
        env = claude_env(home, url)
        agent = await start(
            *("--backend", "claude-cli", "--claude", str(claude), "--prompt", str(prompt)),
            *("--mcp-stdio", str(everything)),
            cwd=work,
            env=env,
        )
        await agent.say("please add 2 and 3")
        first = await agent.until("ThreadRunComplete")
        await agent.say("what was the sum?")
        second = await agent.until("ThreadRunComplete", 2)
        code, stderr = await agent.finish()
    assert code == 0, stderr
    assert first["reply"] == "It is 5."
    assert second["reply"] == "Earlier: 5."
    produced = [e["message"] for e in agent.events if e["event"] == "NewThreadMessage"]
    calls = [c for m in produced for c in m.get("tool_calls", [])]
    assert [(c["name"], c["arguments"]) for c in calls] == [("mcp__s1__get-sum", {"a": 2, "b": 3})]
    tool = next(m for m in produced if m["role"] == "tool")
    assert tool["content"] == "The sum of 2 and 3 is 5."
    # Claude Code got the agent's system prompt, and none of its own tools.
    first_request = fake.requests[0]
    assert "You add numbers." in json.dumps(first_request.get("system"))
    names = {t.get("name") for t in first_request.get("tools", [])}
    assert "mcp__s1__get-sum" in names
    assert not names & {"Bash", "Read", "Edit", "Write", "WebFetch"}
