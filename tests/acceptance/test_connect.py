"""`caucus connect` writes each host's own config into a temp HOME, merged with what is
there; `caucus service install --dry-run` prints a unit systemd accepts; the prompts a host
lists are the room's etiquette."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tomllib
from asyncio.subprocess import PIPE
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from caucus.mcp.prompts import PROMPTS
from tests.waiting import eventually, within

CAUCUS = [sys.executable, "-m", "caucus"]


def caucus(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAUCUS_", "XDG_"))}
    env["HOME"] = str(home)
    return subprocess.run(
        [*CAUCUS, *args], capture_output=True, text=True, env=env, cwd=cwd, check=False, timeout=60
    )


def connected(home: Path, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    done = caucus(home, "connect", *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_connect_says_when_no_hub_answers_and_how_to_start_one(tmp_path: Path) -> None:
    """Nothing listens on the port: the entry is written all the same (a hub may come later),
    and the warning says so, with the command that starts one; --json says `up: false`."""
    done = caucus(tmp_path, "connect", "claude", "--hub", "http://127.0.0.1:9")
    assert done.returncode == 0, done.stderr
    assert "no Caucus hub answers at http://127.0.0.1:9" in done.stderr
    assert "`caucus hub`" in done.stderr
    report = connected(tmp_path, "claude", "--hub", "http://127.0.0.1:9")
    assert report["hub"] == {"url": "http://127.0.0.1:9", "up": False, "version": None}


async def test_connect_finds_a_hub_that_answers(tmp_path: Path) -> None:
    from caucus import __version__
    from caucus.testing import make_hub, serve

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAUCUS_", "XDG_"))}
    env["HOME"] = str(tmp_path)
    said = []
    async with make_hub(tmp_path / "hub") as hub, serve(hub) as url:
        for extra in ([], ["--json"]):
            args = [*CAUCUS, "connect", "claude", "--hub", url, *extra]
            proc = await asyncio.create_subprocess_exec(*args, env=env, stdout=PIPE, stderr=PIPE)
            said.append(await within(proc.communicate(), 60, "caucus connect to end"))
            assert proc.returncode == 0, said[-1][1]
    (out, err), (report, _) = said
    assert b"no Caucus hub" not in err
    assert b"caucus" in out
    assert json.loads(report)["hub"] == {"url": url, "up": True, "version": __version__}


def test_claude_user_config_is_merged_never_clobbered(tmp_path: Path) -> None:
    config = tmp_path / ".claude.json"
    other = {"type": "stdio", "command": "other-server", "args": []}
    config.write_text(json.dumps({"theme": "dark", "mcpServers": {"other": other}}))
    report = connected(tmp_path, "claude", "--hub", "http://127.0.0.1:9999")
    data = json.loads(config.read_text())
    assert data["theme"] == "dark"
    assert data["mcpServers"]["other"] == other
    entry = data["mcpServers"]["caucus"]
    assert entry["type"] == "stdio"
    assert Path(entry["command"]).is_absolute()
    assert Path(entry["command"]).exists()
    assert entry["env"] == {"CAUCUS_HUB": "http://127.0.0.1:9999"}
    assert entry["alwaysLoad"] is True  # Claude Code waits for it before the first turn
    assert (report["merged"], report["replaced"]) == (True, False)
    again = connected(tmp_path, "claude", "--http")  # a second run replaces, never doubles
    data = json.loads(config.read_text())
    assert again["replaced"] is True
    assert data["mcpServers"]["caucus"] == {
        "type": "http",
        "url": "http://127.0.0.1:8765/mcp",
        "alwaysLoad": True,
    }
    assert sorted(data["mcpServers"]) == ["caucus", "other"]


def test_claude_project_scope_writes_the_projects_mcp_json(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    connected(tmp_path, "claude", "--scope", "project", "--channel", cwd=project)
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["caucus"]
    assert entry["env"]["CAUCUS_CLAUDE_CHANNEL"] == "1"
    assert not (tmp_path / ".claude.json").exists()


def test_codex_toml_keeps_every_other_table_and_comment(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        '# my settings\nmodel = "gpt-5"\n\n[mcp_servers.other]\ncommand = "x"\n\n'
        '[mcp_servers.caucus]\ncommand = "stale"\n\n[mcp_servers.caucus.env]\nOLD = "1"\n\n'
        '[profiles.fast]\nmodel = "mini"\n'
    )
    report = connected(tmp_path, "codex")
    text = config.read_text()
    data = tomllib.loads(text)
    assert "# my settings" in text
    assert data["model"] == "gpt-5"
    assert data["profiles"]["fast"]["model"] == "mini"
    assert data["mcp_servers"]["other"] == {"command": "x"}
    ours = data["mcp_servers"]["caucus"]
    assert Path(ours["command"]).is_absolute()
    assert ours["args"] == ["bridge"]
    assert ours["env"] == {"CAUCUS_HUB": "http://127.0.0.1:8765"}  # the stale env is gone
    assert report["replaced"] is True
    connected(tmp_path, "codex", "--http")
    assert tomllib.loads(config.read_text())["mcp_servers"]["caucus"] == {
        "url": "http://127.0.0.1:8765/mcp",
        "default_tools_approval_mode": "approve",  # `codex exec` refuses every call otherwise
    }


def test_gemini_settings_are_merged(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"theme": "GitHub", "mcpServers": {"x": {"command": "x"}}}))
    connected(tmp_path, "gemini", "--http")
    data = json.loads(settings.read_text())
    assert data["theme"] == "GitHub"
    assert data["mcpServers"] == {
        "x": {"command": "x"},
        "caucus": {"httpUrl": "http://127.0.0.1:8765/mcp", "trust": True},  # else `-p` has none
    }


def test_a_broken_config_is_left_alone_with_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / ".claude.json"
    config.write_text("{ not json")
    done = caucus(tmp_path, "connect", "claude")
    assert done.returncode == 2
    assert "is not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr
    assert config.read_text() == "{ not json"


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    done = caucus(tmp_path, "connect", "gemini", "--dry-run")
    assert done.returncode == 0
    assert '"caucus"' in done.stdout
    assert not (tmp_path / ".gemini").exists()


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_dry_run_shows_only_the_change_to_the_caucus_entry(tmp_path: Path, host: str) -> None:
    if host == "claude":
        config = tmp_path / ".claude.json"
        before = {"mcpServers": {"caucus": {"command": "old"}, "x": {}}, "oauth": "s3cret-t0ken"}
        config.write_text(json.dumps(before))
    else:
        config = tmp_path / ".codex" / "config.toml"
        config.parent.mkdir()
        config.write_text('model = "s3cret-t0ken"\n\n[mcp_servers.caucus]\ncommand = "old"\n')
    kept = config.read_text()
    done = caucus(tmp_path, "connect", host, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert config.read_text() == kept
    assert "s3cret-t0ken" not in done.stdout  # the rest of the user's file is never shown
    lines = done.stdout.splitlines()
    assert lines[0] == f"--- {config}"
    assert any(line.startswith("-") and '"old"' in line for line in lines[2:])
    assert any(line.startswith("+") and "bridge" in line for line in lines[2:])


def test_gemini_trusts_the_folder_only_when_asked(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    trust = tmp_path / ".gemini" / "trustedFolders.json"
    done = caucus(tmp_path, "connect", "gemini", "--json", cwd=work)
    assert json.loads(done.stdout)["folder_trusted"] is False
    assert not trust.exists()  # never without being asked (not a terminal: no question)
    done = caucus(tmp_path, "connect", "gemini", "--trust-folder", "--json", cwd=work)
    assert json.loads(done.stdout)["folder_trusted"] is True
    assert json.loads(trust.read_text()) == {str(work.resolve()): "TRUST_FOLDER"}
    # Folder trust turned off in Gemini CLI: no folder needs it.
    settings = tmp_path / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "security": {"folderTrust": {"enabled": False}}}))
    done = caucus(tmp_path, "connect", "gemini", "--json", cwd=tmp_path)
    assert json.loads(done.stdout)["folder_trusted"] is None


def test_the_claude_plugin_folder_has_its_entry_hook_and_commands(tmp_path: Path) -> None:
    plugin = tmp_path / "caucus-plugin"
    connected(tmp_path, "claude", "--plugin", str(plugin))
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "caucus"
    assert "caucus" in json.loads((plugin / ".mcp.json").read_text())["mcpServers"]
    hook = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]["SessionStart"]
    command = hook[0]["hooks"][0]["command"]
    assert command.endswith("service start --quiet")
    for name in ("join", "status", "leave"):
        text = (plugin / "commands" / f"{name}.md").read_text()
        assert text.startswith("---\ndescription: ")
        assert PROMPTS[name].text in text


def test_service_install_dry_run_prints_a_unit_systemd_accepts(tmp_path: Path) -> None:
    done = caucus(tmp_path, "service", "install", "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["done"] is False
    assert not Path(report["path"]).exists()
    if sys.platform == "darwin":
        assert report["kind"] == "launchd"
        return
    assert report["kind"] == "systemd"
    assert report["commands"][-1] == "systemctl --user enable --now caucus-hub.service"
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        if os.environ.get("CI") == "true":
            pytest.fail("systemd-analyze is missing; ./dev test installs systemd")
        pytest.skip("systemd-analyze is not installed")
    unit = tmp_path / "caucus-hub.service"
    unit.write_text(report["unit"])
    verified = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False, timeout=60
    )
    assert verified.returncode == 0, verified.stderr
    # The check can fail: a unit without ExecStart is refused.
    broken = tmp_path / "broken" / "caucus-hub.service"
    broken.parent.mkdir()
    broken.write_text(report["unit"].replace("ExecStart=", "ExecStrat="))
    refused = subprocess.run(
        [analyze, "verify", str(broken)], capture_output=True, text=True, check=False, timeout=60
    )
    assert refused.returncode != 0


def test_service_status_without_a_service_says_so(tmp_path: Path) -> None:
    done = caucus(tmp_path, "service", "status", "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout) == {"installed": False, "running": False}


async def test_the_etiquette_is_served_as_mcp_prompts(url: str) -> None:
    async with Client(f"{url}/mcp", mode="legacy") as client:
        listed = await client.list_prompts()
        assert [p.name for p in listed.prompts] == list(PROMPTS)
        got = await client.get_prompt("join")
        assert got.messages[0].content.text == PROMPTS["join"].text  # type: ignore[union-attr]


async def test_the_bridge_starts_the_installed_service_when_the_hub_is_down(
    tmp_path: Path,
) -> None:
    """It never spawns a hub of its own: it asks the service manager (here a stand-in
    `systemctl` on PATH that records what it was asked) to start the installed unit."""
    home = tmp_path / "home"
    unit = home / ".config" / "systemd" / "user" / "caucus-hub.service"
    unit.parent.mkdir(parents=True)
    unit.write_text("[Service]\nExecStart=/bin/true\n")
    tools = tmp_path / "bin"
    tools.mkdir()
    asked = tmp_path / "asked"
    fake = tools / "systemctl"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {asked}\n')
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAUCUS_", "XDG_"))}
    env.update(HOME=str(home), PATH=f"{tools}:{env['PATH']}", CAUCUS_HUB="http://127.0.0.1:9")
    proc = subprocess.Popen(
        [*CAUCUS, "bridge"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await eventually(asked.exists, what="the bridge to start the hub's service")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=30)
    assert asked.read_text().split() == ["--user", "start", "caucus-hub.service"]
