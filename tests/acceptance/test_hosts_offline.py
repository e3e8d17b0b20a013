"""What of Codex (`@openai/codex`) and Gemini CLI (`@google/gemini-cli`) works offline, from
npm into tests/node: each reads the config `caucus connect` wrote, merged beside a server of
the user's own; Gemini CLI also connects to Caucus, through the bridge and through `/mcp`.
(Their agent loops need their vendors' model APIs, which these tests do not fake.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.nodebin import node_bin as host
from tests.nodebin import run_host


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAUCUS_", "XDG_"))}
    env.update(HOME=str(home), NO_COLOR="1", CODEX_HOME=str(home / ".codex"))
    return env


def connect(env: dict[str, str], host_name: str, hub: str, *extra: str) -> None:
    argv = [sys.executable, "-m", "caucus", "connect", host_name, "--hub", hub, *extra]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


async def run(argv: list[str], env: dict[str, str], cwd: Path, *, stream: str = "out") -> str:
    """What the command printed on `stream` ("out", or "err": Gemini CLI lists there)."""
    code, out, err = await run_host(argv, env, cwd, timeout=120)
    assert code == 0, err
    return out if stream == "out" else err


async def codex_servers(codex: Path, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    found = json.loads(await run([str(codex), "mcp", "list", "--json"], env, cwd))
    return {s["name"]: s for s in found}


@pytest.mark.slow
async def test_codex_reads_what_caucus_connect_wrote(tmp_path: Path, url: str) -> None:
    codex = host("codex")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text('[mcp_servers.mine]\ncommand = "my-server"\n')
    env = environment(home)
    connect(env, "codex", url)
    listed = {
        s["name"]: s
        for s in json.loads(await run([str(codex), "mcp", "list", "--json"], env, tmp_path))
    }
    assert listed["mine"]["transport"]["command"] == "my-server"
    ours = listed["caucus"]
    assert ours["enabled"] is True
    assert ours["transport"]["args"] == ["bridge"]
    assert Path(ours["transport"]["command"]).exists()
    assert ours["transport"]["env"] == {"CAUCUS_HUB": url}
    connect(env, "codex", url, "--http")
    listed = {
        s["name"]: s
        for s in json.loads(await run([str(codex), "mcp", "list", "--json"], env, tmp_path))
    }
    assert listed["caucus"]["transport"]["url"] == f"{url}/mcp"
    assert "mine" in listed


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["bridge", "http"])
async def test_gemini_cli_connects_to_caucus(tmp_path: Path, url: str, transport: str) -> None:
    gemini = host("gemini")
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".gemini").mkdir(parents=True)
    work.mkdir()
    # Gemini CLI runs MCP servers only in folders the user trusts.
    trusted = {str(work): "TRUST_FOLDER"}
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(trusted))
    env = environment(home)
    connect(env, "gemini", url, *(["--http"] if transport == "http" else []))
    out = await run([str(gemini), "mcp", "list"], env, work, stream="err")
    line = next(x for x in out.splitlines() if "caucus:" in x)
    assert line.rstrip().endswith("Connected"), out
    assert ("(http)" in line) == (transport == "http")
