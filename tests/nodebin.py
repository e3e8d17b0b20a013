"""The Node tools and real hosts `./dev test` installs (pinned by tests/node/package-lock.json,
into a cache outside the checkout), for the tiers that run them: found, or skipped where npm
is missing (never under CI=true, where it fails)."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.waiting import within

if TYPE_CHECKING:
    from caucus.client import HubClient


def _bin() -> Path:
    """Where `./dev test` put them: `CAUCUS_TEST_NODE_TOOLS`, else the cache folder of this lock
    (as `./dev`'s `node_tools_dir` names it)."""
    named = os.environ.get("CAUCUS_TEST_NODE_TOOLS")
    if named:
        return Path(named)
    lock = Path(__file__).resolve().parent / "node" / "package-lock.json"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:16]
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    root = os.environ.get("CAUCUS_TEST_NODE_CACHE") or str(Path(cache) / "caucus" / "node")
    return Path(root) / digest / "node_modules" / ".bin"


BIN = _bin()


def node_bin(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: ./dev test installs it with npm")
        pytest.skip(f"{name} is not installed (./dev test installs it when npm is available)")
    return path


async def run_host(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 180
) -> tuple[int, str, str]:
    """Run a host's command to its end, with no stdin: (exit status, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        env=env,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await within(proc.communicate(), timeout, "the process to end")
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def claude_env(home: Path, model_url: str, **extra: str) -> dict[str, str]:
    """The environment a real Claude Code runs in offline: its own HOME, the scripted Messages
    API fake as its model, and nothing of ours or Anthropic's inherited."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAUCUS_", "ANTHROPIC_"))}
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=model_url,
        ANTHROPIC_API_KEY="sk-ant-caucus-test",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        **extra,
    )
    return env


def host_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment a real Codex or Gemini CLI runs in offline: its own HOME (and
    CODEX_HOME), no colour, and nothing of ours, OpenAI's or Google's inherited."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CAUCUS_", "XDG_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_"))
    }
    env.update(HOME=str(home), NO_COLOR="1", CODEX_HOME=str(home / ".codex"), **extra)
    return env


async def answer_once(peer: HubClient, host: str, greeting: str, reply: str) -> None:
    """The peer a host's agent greets: it waits for the greeting, then answers it once."""
    while True:
        batch = await peer.receive(timeout=25)
        for m in batch.messages:
            if m.sender == host and m.content == greeting:
                await peer.send(host, reply)
                return
