"""`caucus agent` as a process: input lines on stdin, NDJSON events on stdout, driven by the
scripted OpenAI-compatible fake over real HTTP, with a real foreign MCP tool server from npm
(`@modelcontextprotocol/server-everything`) started through --mcp-stdio."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from caucus.testing import Call, FakeOpenAI, Say, last_user, offered, serve_fake, tool_messages
from tests import waiting
from tests.agentproc import AgentProcess
from tests.nodebin import node_bin


async def start(*args: str, cwd: Path, env: dict[str, str] | None = None) -> AgentProcess:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "caucus",
        "agent",
        *args,
        cwd=str(cwd),
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    return AgentProcess(proc)


async def run_to_end(*args: str, cwd: Path) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "caucus",
        "agent",
        *args,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await waiting.within(proc.communicate(), 60, "the agent to end")
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_an_agent_answers_over_stdin_and_stdout_with_a_foreign_mcp_tool(
    tmp_path: Path,
) -> None:
    everything = node_bin("mcp-server-everything")

    def model(request: dict[str, Any]) -> list[Any]:
        results = tool_messages(request)
        if "add" in last_user(request) and not results:
            return [Call("get-sum", {"a": 2, "b": 3})]
        if results:
            return [Say(f"The tool said: {results[-1]['content']}")]
        return [Say("ready")]

    fake = FakeOpenAI(model)
    prompt = tmp_path / "prompt.md"
    prompt.write_text("You add numbers.\n\n## On Start\nSay you are ready.\n", "utf-8")
    async with serve_fake(fake) as url:
        agent = await start(
            "--model",
            "fake-model",
            "--base-url",
            f"{url}/v1",
            "--prompt",
            str(prompt),
            "--mcp-stdio",
            str(everything),
            cwd=tmp_path,
        )
        first = await agent.until("ThreadRunComplete")
        assert first["reply"] == "ready"
        await agent.say("please add 2 and 3")
        second = await agent.until("ThreadRunComplete", 2)
        code, stderr = await agent.finish()
    assert code == 0, stderr
    assert second["reply"] == "The tool said: The sum of 2 and 3 is 5."
    produced = [e["message"] for e in agent.events if e["event"] == "NewThreadMessage"]
    assert [m["role"] for m in produced] == ["assistant", "assistant", "tool", "assistant"]
    assert produced[1]["tool_calls"][0]["name"] == "get-sum"
    assert "get-sum" in offered(fake.requests[0])
    # The system prompt lost its On Start section, which came as the first notice.
    assert fake.requests[0]["messages"][0] == {"role": "system", "content": "You add numbers."}
    notice = next(e for e in agent.events if e["event"] == "NoticeReceived")
    assert (notice["source"], notice["text"]) == ("prompt:on-start", "Say you are ready.")
    # Logs (the tool server's stderr among them) are NDJSON on stderr, never on stdout.
    for line in stderr.splitlines():
        assert isinstance(json.loads(line), dict)


async def test_bad_flags_an_unreachable_model_or_a_dead_tool_server_get_one_line(
    tmp_path: Path,
) -> None:
    code, out, err = await run_to_end("--backend", "openai", cwd=tmp_path)
    assert (code, out) == (2, "")
    assert err.strip().splitlines()[-1] == (
        "error: --backend openai needs --model: the model's name on the server"
    )
    code, out, err = await run_to_end(
        "--model", "m", "--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path
    )
    assert (code, out) == (1, "")
    assert "cannot reach the model server at http://127.0.0.1:9/v1" in err.splitlines()[-1]
    code, out, err = await run_to_end(
        "--backend", "mock", "--mcp-stdio", "no-such-server --flag", cwd=tmp_path
    )
    assert (code, out) == (1, "")
    assert err.splitlines()[-1].startswith("error: the tool server `no-such-server --flag`")
    code, out, err = await run_to_end(
        "--backend", "mock", "--prompt", str(tmp_path / "missing.md"), cwd=tmp_path
    )
    assert (code, out) == (2, "")
    assert "cannot read the prompt" in err.splitlines()[-1]
    code, out, err = await run_to_end(
        "--backend", "claude-cli", "--claude", str(tmp_path / "no-claude"), cwd=tmp_path
    )
    assert (code, out) == (1, "")
    assert "was not found: install Claude Code" in err.splitlines()[-1]
    code, _, err = await run_to_end("--backend", "mock", "--max-turns", "0", cwd=tmp_path)
    assert code == 2
    assert "--max-turns" in err


async def test_the_mock_backend_runs_without_a_model(tmp_path: Path) -> None:
    agent = await start("--backend", "mock", "--name", "echoer", cwd=tmp_path)
    await agent.say("ping")
    code, stderr = await agent.finish()
    assert code == 0, stderr
    replies = [e["reply"] for e in agent.events if e["event"] == "ThreadRunComplete"]
    assert replies
    assert replies[-1].endswith("ping")
    created = next(e for e in agent.events if e["event"] == "NewAgentCreated")
    assert created["name"] == "echoer"


async def test_code_mode_runs_a_script_against_a_foreign_servers_tools(tmp_path: Path) -> None:
    everything = node_bin("mcp-server-everything")
    script = (
        "import asyncio\n"
        "sums = await asyncio.gather(*[get_sum(a=n, b=n) for n in range(1, 4)])\n"
        "[s for s in sums]"
    )

    def model(request: dict[str, Any]) -> list[Any]:
        results = tool_messages(request)
        if results:
            return [Say(results[-1]["content"])]
        if "sums" in last_user(request):
            return [Call("run_code", {"code": script})]
        return [Say("ready")]

    fake = FakeOpenAI(model)
    async with serve_fake(fake) as url:
        agent = await start(
            *("--model", "m", "--base-url", f"{url}/v1", "--code-mode"),
            *("--mcp-stdio", str(everything)),
            cwd=tmp_path,
        )
        await agent.until("ThreadRunComplete")
        await agent.say("the sums please")
        answered = await agent.until("ThreadRunComplete", 2)
        code, stderr = await agent.finish()
    assert code == 0, stderr
    assert offered(fake.requests[0]) == ["run_code"]
    description = fake.requests[0]["tools"][0]["function"]["description"]
    assert "async def get_sum(*, a: float, b: float) -> Any:" in description
    body = json.loads(answered["reply"])
    assert body["result"] == [
        "The sum of 1 and 1 is 2.",
        "The sum of 2 and 2 is 4.",
        "The sum of 3 and 3 is 6.",
    ]
    assert [c["tool"] for c in body["calls"]] == ["get-sum"] * 3


async def test_without_a_hub_the_agent_says_what_runs_unasked_and_refuses_the_rest(
    tmp_path: Path,
) -> None:
    """Nobody can approve without a hub: a tool its server does not mark read-only is refused
    (the model hears how to allow it), and the agent says at start which tools run unasked."""
    fileserver = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'fileserver.py'}"
    (tmp_path / "notes.txt").write_text("kept", "utf-8")

    def model(request: dict[str, Any]) -> list[Any]:
        results = tool_messages(request)
        if not results:
            return [Call("write_file", {"path": "notes.txt", "content": "overwritten"})]
        return [Say(results[-1]["content"])]

    async with serve_fake(FakeOpenAI(model)) as url:
        flags = ("--model", "m", "--base-url", f"{url}/v1", "--mcp-stdio", fileserver)
        agent = await start(*flags, cwd=tmp_path)
        await agent.say("please overwrite notes.txt")
        done = await agent.until("ThreadRunComplete")
        code, stderr = await agent.finish()
        assert code == 0, stderr
        (unasked,) = [line for line in stderr.splitlines() if "runs unasked:" in line]
        assert "read_file" in unasked
        assert "write_file" not in unasked
        (refused,) = [line for line in stderr.splitlines() if "refuses (no hub" in line]
        assert "write_file" in refused
        assert "--allow write_file" in done["reply"]
        assert (tmp_path / "notes.txt").read_text("utf-8") == "kept"

        # --unattended: the user chose to run them unasked, and the agent says so at start.
        unattended = await start(*flags, "--unattended", cwd=tmp_path)
        await unattended.say("please overwrite notes.txt")
        await unattended.until("ThreadRunComplete")
        code, stderr = await unattended.finish()
        assert code == 0, stderr
        assert "--unattended: runs unasked what would wait for an approval: write_file" in stderr
        assert (tmp_path / "notes.txt").read_text("utf-8") == "overwritten"
