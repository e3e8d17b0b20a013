"""Caucus as users install it: the README's install commands (a fresh venv, this checkout
built into a wheel and installed with its dependencies from the package index) give a
`caucus` that serves the console and runs `caucus bridge` for the official MCP client."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters

from caucus import __version__
from caucus.testing import make_hub, serve
from tests.acceptance.test_readme import block_with, code_blocks
from tests.mcptools import call

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The `bin` directory of a fresh venv, made by the README's own install commands: once
    per run, the first xdist worker to ask builds it and the others wait for it (a wheel build
    and install is the costliest set-up in the suite)."""
    if worker_id == "master":
        return _install(tmp_path_factory.mktemp("home"))
    shared = tmp_path_factory.getbasetemp().parent  # this run's, shared by its workers
    home, done = shared / "readme-install", shared / "readme-install.done"
    with (shared / "readme-install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            home.mkdir(exist_ok=True)
            _install(home)
            done.touch()
    return home / ".local" / "share" / "caucus-venv" / "bin"


def _install(home: Path) -> Path:
    (block,) = [b for b in code_blocks("sh") if "pip install ./" in b]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAUCUS_", "VIRTUAL_ENV"))}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"  # its python3 is 3.11+
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=ROOT,
        env={**env, "HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().endswith(__version__)
    return home / ".local" / "share" / "caucus-venv" / "bin"


def _outside(tmp: Path) -> dict[str, str]:
    """An environment that cannot reach this checkout's sources."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAUCUS_", "PYTHON"))}
    return {**env, "CAUCUS_HOME": str(tmp), "HOME": str(tmp)}


def test_the_installed_command_is_caucus_and_knows_its_version(installed: Path) -> None:
    out = subprocess.run(
        [installed / "caucus", "--version"], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == __version__
    where = subprocess.run(
        [installed / "python", "-c", "import caucus; print(caucus.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=60,
    )
    assert str(installed.parent) in where.stdout  # the venv's copy, not this checkout's


async def test_the_installed_hub_serves_the_console_and_the_bridge_joins(
    installed: Path, tmp_path: Path
) -> None:
    env = _outside(tmp_path)
    hub = subprocess.Popen(
        [installed / "caucus", "hub", "--port", "0", "--db", str(tmp_path / "h.db"), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    try:
        assert hub.stdout is not None
        url = json.loads(hub.stdout.readline())["url"]
        async with httpx2.AsyncClient(base_url=url) as http:
            page = await http.get("/")
            assert page.status_code == 200
            assert "<html" in page.text.lower()
            script = await http.get("/console/app.js")
            assert (script.status_code, script.headers["content-type"].split(";")[0]) == (
                200,
                "text/javascript",
            )
            assert (await http.get("/version")).json()["version"] == __version__
        params = StdioServerParameters(
            command=str(installed / "caucus"),
            args=["bridge"],
            env={**env, "CAUCUS_HUB": url, "XDG_RUNTIME_DIR": str(tmp_path / "run")},
            cwd=str(tmp_path),
        )
        async with Client(params, mode="legacy") as client:
            joined = await call(client, "join", name="from-a-wheel")
            assert (joined["name"], joined["outcome"]) == ("from-a-wheel", "created")
            assert (await call(client, "whoami"))["name"] == "from-a-wheel"
    finally:
        hub.terminate()
        hub.wait(timeout=30)
        for stream in (hub.stdout, hub.stderr):
            if stream is not None:
                stream.close()


def test_pipx_and_uvx_install_and_run_the_wheel_as_the_readme_says(tmp_path: Path) -> None:
    """The README's pipx/uvx block, run as written (pipx and uv come from the dev lock), then
    `uvx --from <wheel> caucus bridge` answers an MCP host."""
    block = block_with("pipx install dist/")
    tools = Path(sys.executable).parent  # the dev venv: python3 3.11+, pipx, uvx
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAUCUS_", "VIRTUAL_ENV"))}
    env.update(
        PATH=f"{tools}:{env['PATH']}",
        HOME=str(tmp_path),
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
        PIPX_DEFAULT_PYTHON=sys.executable,
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        UV_TOOL_DIR=str(tmp_path / "uv-tools"),
        UV_PYTHON=sys.executable,
        UV_PYTHON_DOWNLOADS="never",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == __version__  # uvx ran the wheel's caucus
    pipx_caucus = tmp_path / "bin" / "caucus"
    version = subprocess.run(
        [pipx_caucus, "--version"], capture_output=True, text=True, env=env, timeout=60
    )
    assert version.stdout.strip() == __version__
    where = subprocess.run(
        [
            tmp_path / "pipx" / "venvs" / "caucus-hub" / "bin" / "python",
            "-c",
            "import caucus; print(caucus.__file__)",
        ],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=60,
    )
    assert str(tmp_path / "pipx") in where.stdout  # pipx's own copy, not this checkout's


async def test_uvx_from_the_wheel_serves_the_bridge(tmp_path: Path) -> None:
    wheels = sorted((ROOT / "dist").glob("caucus_hub-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(ROOT / "dist"), "./"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            timeout=600,
        )
        wheels = sorted((ROOT / "dist").glob("caucus_hub-*.whl"))
    env = _outside(tmp_path)
    env.update(
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        UV_PYTHON=sys.executable,
        UV_PYTHON_DOWNLOADS="never",
        XDG_RUNTIME_DIR=str(tmp_path / "run"),
    )
    async with make_hub(tmp_path / "hub") as hub, serve(hub) as url:
        params = StdioServerParameters(
            command=str(Path(sys.executable).parent / "uvx"),
            args=["--from", str(wheels[-1]), "caucus", "bridge"],
            env={**env, "CAUCUS_HUB": url},
            cwd=str(tmp_path),
        )
        async with Client(params, mode="legacy") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"join", "say", "listen", "watch_command"} <= names
            assert (await call(client, "whoami"))["joined"] is False
