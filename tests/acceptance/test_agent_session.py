"""The Claude Code session file `caucus agent --session-log` writes is opened by the real Claude
Code from npm (`claude --resume`), which sends that history (the question, the tool call, its
result, the answer, and the On Start notice as a queued message) to the model — here the
scripted Messages API fake."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from caucus.runtime.session.claude import project_folder
from caucus.testing import (
    Call,
    FakeAnthropic,
    FakeOpenAI,
    Say,
    Text,
    last_user,
    serve_fake,
    tool_messages,
)
from tests.acceptance.test_agent_cli import start
from tests.nodebin import claude_env, node_bin, run_host


def model(request: dict[str, Any]) -> list[Any]:
    results = tool_messages(request)
    if results:
        return [Say(f"It is {results[-1]['content'].rsplit(' ', 1)[-1].rstrip('.')}.")]
    if "add" in last_user(request):
        return [Call("get-sum", {"a": 2, "b": 3})]
    return [Say("ready")]


async def test_claude_code_resumes_the_session_an_agent_wrote(tmp_path: Path) -> None:
    everything = node_bin("mcp-server-everything")
    claude = node_bin("claude")
    work, home, logs = tmp_path / "work", tmp_path / "home", tmp_path / "logs"
    work.mkdir()
    home.mkdir()
    prompt = tmp_path / "prompt.md"
    prompt.write_text("You add numbers.\n# On Start\nSay you are ready.\n", "utf-8")
    async with serve_fake(FakeOpenAI(model)) as url:
        agent = await start(
            *("--model", "local-model", "--base-url", f"{url}/v1", "--prompt", str(prompt)),
            *("--mcp-stdio", str(everything), "--session-log", str(logs)),
            cwd=work,
        )
        await agent.until("ThreadRunComplete")
        await agent.say("please add 2 and 3")
        answered = await agent.until("ThreadRunComplete", 2)
        code, stderr = await agent.finish()
    assert code == 0, stderr
    assert answered["reply"] == "It is 5."
    (session,) = [p for p in logs.iterdir() if not p.name.startswith("transcript-")]
    (transcript,) = [p for p in logs.iterdir() if p.name.startswith("transcript-")]
    assert "ToolAnswered" in transcript.read_text("utf-8")

    folder = project_folder(str(work), home)
    folder.mkdir(parents=True)
    shutil.copy(session, folder / session.name)
    fake = FakeAnthropic(lambda request: [Text("You asked me to add 2 and 3.")])
    async with serve_fake(fake) as model_url:
        env = claude_env(home, model_url)
        argv = [str(claude), "-p", "What did I ask you?", "--resume", session.stem]
        code, out, err = await run_host([*argv, "--output-format", "json"], env, work)
    assert code == 0, err
    assert json.loads(out)["result"] == "You asked me to add 2 and 3."
    sent = fake.requests[-1]["messages"]
    flat = json.dumps(sent)
    assert "please add 2 and 3" in flat
    assert "[notice from prompt:on-start]" in flat
    uses = [b for m in sent if isinstance(m["content"], list) for b in m["content"]]
    assert any(b.get("type") == "tool_use" and b.get("name") == "get-sum" for b in uses)
    results = [b for b in uses if b.get("type") == "tool_result"]
    assert any("The sum of 2 and 3 is 5." in json.dumps(b) for b in results)
    assert any(b.get("type") == "text" and b.get("text") == "It is 5." for b in uses)
