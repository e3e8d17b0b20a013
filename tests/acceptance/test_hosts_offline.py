"""Codex (`@openai/codex`) and Gemini CLI (`@google/gemini-cli`), from npm into tests/node,
read the config `caucus connect` wrote, merged beside a server of the user's own; Gemini CLI
connects to Caucus through the bridge and through `/mcp`, in a folder it trusts. (Their agent
loops, driven by scripted fakes of their model APIs: test_codex_host.py, test_gemini_host.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.nodebin import host_env, run_host
from tests.nodebin import node_bin as host


def connect(
    env: dict[str, str], host_name: str, hub: str, *extra: str, cwd: Path | None = None
) -> str:
    argv = [sys.executable, "-m", "caucus", "connect", host_name, "--hub", hub, *extra]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


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
    env = host_env(home)
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


async def gemini_line(gemini: Path, env: dict[str, str], work: Path) -> str:
    out = await run([str(gemini), "mcp", "list"], env, work, stream="err")
    return next(x for x in out.splitlines() if "caucus:" in x).rstrip()


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["bridge", "http"])
async def test_gemini_cli_connects_to_caucus(tmp_path: Path, url: str, transport: str) -> None:
    """Within Gemini CLI's 5 s limit, and in a folder `caucus connect` had it trust."""
    gemini = host("gemini")
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".gemini").mkdir(parents=True)
    work.mkdir()
    env = host_env(home)
    http = ["--http"] if transport == "http" else []
    said = connect(env, "gemini", url, *http, "--trust-folder", cwd=work)
    assert f"trusted {work} in Gemini CLI" in said
    line = await gemini_line(gemini, env, work)
    assert line.endswith("Connected"), line
    assert ("(http)" in line) == (transport == "http")


@pytest.mark.slow
async def test_an_untrusted_folder_is_named_and_trusting_it_connects(
    tmp_path: Path, url: str
) -> None:
    gemini = host("gemini")
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".gemini").mkdir(parents=True)
    work.mkdir()
    other = {"/elsewhere": "DO_NOT_TRUST"}
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(other))
    env = host_env(home)
    said = connect(env, "gemini", url, "--no-trust-folder", cwd=work)
    assert "caucus connect gemini --trust-folder" in said  # what to do, exactly
    assert (await gemini_line(gemini, env, work)).endswith("Disabled")
    report = json.loads(connect(env, "gemini", url, "--trust-folder", "--json", cwd=work))
    assert report["folder_trusted"] is True
    rules = json.loads((home / ".gemini" / "trustedFolders.json").read_text())
    assert rules == {**other, str(work.resolve()): "TRUST_FOLDER"}  # the user's rules kept
    assert (await gemini_line(gemini, env, work)).endswith("Connected")
    again = json.loads(connect(env, "gemini", url, "--json", cwd=work))
    assert again["folder_trusted"] is True
