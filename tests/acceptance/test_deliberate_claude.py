"""`caucus deliberate` on the Claude Code CLI backend: the real Claude Code from npm (driven by
the scripted Messages API fake) answers each analyst and the chair through `claude -p`, calls
the MCP evidence layer's allowed tool itself, and gets the guard prompt; a failing `claude`
has its stderr tail in the error."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from caucus.testing import FakeAnthropic, Text, ToolUse, result_text, serve_fake, tool_results
from tests import record_format
from tests.nodebin import claude_env, node_bin
from tests.waiting import within

TOOL = "mcp__everything__get-sum"


def model(request: dict[str, Any]) -> list[Any]:
    said = json.dumps(request.get("messages", []))
    if "You chair" in said:
        return [Text('{"stance": "approve", "decision": "Ship it.", "confidence": 0.7}')]
    results = tool_results(request)
    if not results:
        return [Text("Checking."), ToolUse(TOOL, {"a": 2, "b": 3})]
    summary = f"the tool says: {result_text(results[-1])}"
    return [Text(json.dumps({"stance": "approve", "summary": summary, "confidence": 0.8}))]


async def deliberate(cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "caucus",
        "deliberate",
        "Ship?",
        "--json",
        cwd=str(cwd),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await within(proc.communicate(), 300, "the process to end")
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_claude_code_answers_as_each_analyst_with_the_allowed_evidence_tool(
    tmp_path: Path,
) -> None:
    claude, everything = node_bin("claude"), node_bin("mcp-server-everything")
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"everything": {"command": str(everything), "args": []}}})
    )
    (tmp_path / "config.yaml").write_text(
        "max_rounds: 1\n"
        f"backend: {{type: claude-cli, command: '{claude}', mcp_config: mcp.json, "
        f"allowed_tools: ['{TOOL}']}}\n"
    )
    fake = FakeAnthropic(model)
    async with serve_fake(fake) as url:
        code, out, err = await deliberate(tmp_path, claude_env(home, url))
    assert code == 0, err
    record = json.loads(out)["record"]
    assert record["decision"] == "Ship it."
    assert [p["summary"] for p in record["positions"]] == [
        "the tool says: The sum of 2 and 3 is 5."
    ] * 3
    first = fake.requests[0]
    names = {t.get("name") for t in first.get("tools", [])}
    assert TOOL in names
    assert not names & {"Bash", "Read", "Edit", "Write", "WebFetch"}
    assert "read-only sources of evidence" in json.dumps(first["messages"])
    assert record_format.verify(tmp_path / "decisions.jsonl") == (1, True)


async def test_a_failing_claude_is_retried_and_its_stderr_is_shown(tmp_path: Path) -> None:
    broken = tmp_path / "claude"
    broken.write_text(
        "#!/bin/sh\ncat >/dev/null\necho 'API Error: 529 overloaded, try later' >&2\nexit 1\n"
    )
    broken.chmod(0o755)
    (tmp_path / "config.yaml").write_text(f"backend: {{type: claude-cli, command: '{broken}'}}\n")
    code, _, err = await deliberate(tmp_path, dict(os.environ))
    assert code == 1
    assert (
        "failed after 2 attempts — the backend failed: claude exited with 1: API Error: 529" in err
    )
    assert "again — the backend failed" in err  # the first attempt was retried
    assert not (tmp_path / "decisions.jsonl").exists()
