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
from typing import Any

import pytest
import uvicorn

from caucus.errors import InvalidRequest
from caucus.testing import serve_app
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
    assert installed["chained"]["pre-commit"].endswith("pre-commit.caucus-chained")
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
    assert "could not reach the hub" in out

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


async def _git(repo: Path, *args: str, **env: str) -> tuple[int, str]:
    identity = ["-c", "user.name=bob", "-c", "user.email=bob@example.test"]
    return await run("git", *identity, *args, cwd=repo, CAUCUS_NAME="bob", **env)


async def test_the_guard_fails_closed_on_a_refusal_and_asks_about_any_number_of_files(
    repo: Path, url: str, connect: ClientFactory
) -> None:
    guard = [sys.executable, "-m", "caucus", "guard"]
    assert (await run(*guard, "install", "--repo", str(repo), "--hub", url, cwd=repo))[0] == 0
    alice = await connect("alice")
    await alice.reserve(["src/app.py"], reason="the login rewrite")
    generated = repo / "generated"
    generated.mkdir()
    for i in range(2600):  # their names alone are past the hub's 64 KiB body limit
        (generated / f"fixture_{i:05d}_with_a_rather_long_descriptive_name.json").write_text("{}")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("bob's edit\n")
    await run("git", "add", "-A", cwd=repo)
    status, out = await _git(repo, "commit", "-q", "-m", "fixtures and a fix")
    assert status != 0, out
    assert "src/app.py: alice holds 'src/app.py'" in out

    # A hub that answers, but refuses (here: everything, 503): the commit stops, saying so.
    async with serve_app(_config, _refusing) as refusing:
        assert (await run(*guard, "install", "--repo", str(repo), "--hub", refusing, cwd=repo))[
            0
        ] == 0
        status, out = await _git(repo, "commit", "-q", "-m", "against a refusing hub")
    assert status != 0, out
    assert "refused the check" in out
    # One that cannot be reached at all lets it through, saying so (tested above too).
    await run(*guard, "install", "--repo", str(repo), "--hub", "http://127.0.0.1:9", cwd=repo)
    status, out = await _git(repo, "commit", "-q", "-m", "hub down")
    assert status == 0, out
    assert "could not reach the hub" in out


def _config(app: Any) -> uvicorn.Config:
    return uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")


async def _refusing(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b'{"error": "storage_error", "detail": "the hub could not read the reservations"}'
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def test_merges_cherry_picks_rebases_and_fast_forwards_are_guarded(
    repo: Path, url: str, connect: ClientFactory
) -> None:
    guard = [sys.executable, "-m", "caucus", "guard"]
    alice = await connect("alice")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("v1\n")
    (repo / "README.md").write_text("readme\n")
    await run("git", "add", "-A", cwd=repo)
    await _git(repo, "commit", "-q", "-m", "base")
    await _git(repo, "branch", "-M", "main")
    await _git(repo, "checkout", "-q", "-b", "feat")
    (repo / "src" / "app.py").write_text("v2 from feat\n")
    await _git(repo, "commit", "-qam", "feat changes app.py")
    await _git(repo, "checkout", "-q", "main")
    assert (await run(*guard, "install", "--repo", str(repo), "--hub", url, cwd=repo))[0] == 0
    await alice.reserve(["src/app.py/"], reason="the login rewrite")  # a folder pattern: the file

    status, out = await _git(repo, "merge", "--ff-only", "feat")
    assert status != 0, out
    assert "src/app.py: alice holds 'src/app.py/'" in out
    assert "git reset --merge" in out  # git had checked the files out: how to put them back
    assert (await _git(repo, "rev-parse", "HEAD"))[1] != (await _git(repo, "rev-parse", "feat"))[1]
    await _git(repo, "reset", "-q", "--merge")
    assert (repo / "src" / "app.py").read_text() == "v1\n"

    (repo / "README.md").write_text("readme, on main\n")
    await _git(repo, "commit", "-qam", "main moves on")
    status, out = await _git(repo, "merge", "--no-edit", "feat")
    assert status != 0, out
    assert "alice holds" in out
    await _git(repo, "reset", "-q", "--hard")  # the refused merge's changes go

    status, out = await _git(repo, "cherry-pick", "feat")
    assert status != 0, out
    assert "alice holds" in out
    await _git(repo, "cherry-pick", "--abort")
    await _git(repo, "reset", "-q", "--hard")

    await _git(repo, "checkout", "-q", "feat")
    status, out = await _git(repo, "rebase", "main")
    assert status != 0, out
    assert "alice holds" in out
    await _git(repo, "rebase", "--abort")

    # The same, when the holder releases: through.
    await alice.release(all=True)
    assert (await _git(repo, "rebase", "main"))[0] == 0
    uninstalled = await run(*guard, "uninstall", "--repo", str(repo), "--json", cwd=repo)
    assert json.loads(uninstalled[1]) == {"removed": True, "restored": True}
    hooks = repo / ".git" / "hooks"
    assert not (hooks / "pre-merge-commit").exists()
    assert "earlier-hook-ran" in (hooks / "pre-commit").read_text()


async def test_a_pattern_with_a_control_character_is_refused(connect: ClientFactory) -> None:
    alice = await connect("alice")
    with pytest.raises(InvalidRequest) as refused:
        await alice.reserve(["src/app.py\nsrc/other.py"])
    assert refused.value.extra["field"] == "paths"
