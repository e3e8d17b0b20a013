"""`caucus guard` in a real git repository against a served hub (issue 34): the pre-commit
hook refuses a commit touching a file another agent holds exclusively, naming the holder; lets
through the holder's own commit, a file nobody reserved, an override, and a commit when the
hub does not answer; runs a hook that was there before it first; and uninstalls back to it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ClientFactory
from tests.waiting import within

pytestmark = pytest.mark.skipif(
    os.environ.get("CI") != "true"
    and not any((Path(d) / "git").exists() for d in os.environ.get("PATH", "").split(os.pathsep)),
    reason="git is not installed",
)


async def run(*command: str, cwd: Path, **env: str) -> tuple[int, str]:
    """A command's exit status and its output (both streams), without blocking the loop
    that serves the hub the hook asks."""
    proc = await asyncio.create_subprocess_exec(
        *command,
        cwd=cwd,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await within(proc.communicate(), 60, " ".join(command))
    assert proc.returncode is not None
    return proc.returncode, out.decode()


async def commit(repo: Path, path: str, as_name: str, **env: str) -> tuple[int, str]:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"{target.read_text() if target.exists() else ''}edit by {as_name}\n")
    await run("git", "add", path, cwd=repo)
    identity = ["-c", f"user.name={as_name}", "-c", f"user.email={as_name}@example.test"]
    return await run(
        "git",
        *identity,
        "commit",
        "-q",
        "-m",
        f"{as_name}: {path}",
        cwd=repo,
        CAUCUS_NAME=as_name,
        **env,
    )


@pytest.fixture
async def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    assert (await run("git", "init", "-q", cwd=root))[0] == 0
    earlier = root / ".git" / "hooks" / "pre-commit"
    earlier.parent.mkdir(parents=True, exist_ok=True)
    earlier.write_text(f"#!/bin/sh\necho ran >> {tmp_path / 'earlier-hook-ran'}\n")
    earlier.chmod(0o755)
    return root


async def test_the_hook_keeps_commits_off_what_another_agent_holds(
    repo: Path, url: str, connect: ClientFactory, tmp_path: Path
) -> None:
    guard = [sys.executable, "-m", "caucus", "guard"]
    status, out = await run(
        *guard, "install", "--repo", str(repo), "--hub", url, "--json", cwd=repo
    )
    assert status == 0, out
    installed = json.loads(out)
    assert installed["chained"].endswith("pre-commit.caucus-chained")
    alice = await connect("alice")
    await alice.reserve(["src/**/*.py"], reason="typing pass")

    status, out = await commit(repo, "src/pkg/app.py", "bob")
    assert status != 0
    assert "src/pkg/app.py: alice holds 'src/**/*.py'" in out
    assert "typing pass" in out
    assert (tmp_path / "earlier-hook-ran").read_text() == "ran\n"  # chained, and first
    await run("git", "reset", "-q", cwd=repo)  # the refused change stays, unstaged

    assert (await commit(repo, "README.md", "bob"))[0] == 0  # nobody holds it
    assert (await commit(repo, "src/pkg/app.py", "alice"))[0] == 0  # her own
    status, out = await commit(repo, "src/pkg/app.py", "bob", CAUCUS_GUARD="off")
    assert status == 0, out
    # A hub that does not answer does not stop work: through, with a warning.
    await run(*guard, "install", "--repo", str(repo), "--hub", "http://127.0.0.1:9", cwd=repo)
    status, out = await commit(repo, "src/pkg/app.py", "bob")
    assert status == 0, out
    assert "could not ask the hub" in out

    status, out = await run(*guard, "uninstall", "--repo", str(repo), "--json", cwd=repo)
    assert json.loads(out) == {"removed": True, "restored": True}
    hook = repo / ".git" / "hooks" / "pre-commit"
    assert "earlier-hook-ran" in hook.read_text()  # the hook that was there before
    log = (await run("git", "log", "--format=%s", cwd=repo))[1].split("\n")
    assert log[:4] == [
        "bob: src/pkg/app.py",
        "bob: src/pkg/app.py",
        "alice: src/pkg/app.py",
        "bob: README.md",
    ]


async def test_check_says_what_blocks_as_json(repo: Path, url: str, connect: ClientFactory) -> None:
    alice = await connect("alice")
    await alice.reserve(["docs/"], reason="rewriting")
    (repo / "docs").mkdir()
    (repo / "docs" / "index.md").write_text("draft\n")
    await run("git", "add", "docs/index.md", cwd=repo)
    command = [sys.executable, "-m", "caucus", "guard", "check", "--hub", url, "--json"]
    status, out = await run(*command, cwd=repo, CAUCUS_NAME="bob")
    assert status == 1
    report = json.loads(out)
    assert report["allowed"] is False
    assert [(b["path"], b["reservation"]["holder"]) for b in report["blocked"]] == [
        ("docs/index.md", "alice")
    ]
