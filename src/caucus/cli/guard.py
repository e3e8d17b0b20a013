"""`caucus guard`: a git pre-commit hook that refuses a commit touching files another agent holds
exclusively reserved (issue 34).

`install` writes the hook into a repository's hooks folder (wherever `core.hooksPath` points),
keeping a hook that was there as `pre-commit.caucus-chained`, run first; `uninstall` puts it
back. At each commit the hook runs `caucus guard check`: the staged files (renames as both of
their paths) are asked of the hub (`POST /reservations/blocked`), and any that another agent's
exclusive reservation covers stops the commit, naming holder, pattern, time left and reason.
The committing agent is `$CAUCUS_NAME` (or the name given to `install --as`); its own
reservations never block it. `CAUCUS_GUARD=off` lets one commit through; a hub that does not
answer lets it through with a warning (the guard protects work, it must not stop it).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from caucus.defaults import DEFAULT_HUB

guard_app = typer.Typer(
    help="A git pre-commit hook that keeps commits off files other agents reserved.",
    no_args_is_help=True,
)

MARK = "# caucus guard: installed by `caucus guard install`"
CHAINED = "pre-commit.caucus-chained"


def _git(repo: Path, *args: str) -> str:
    git = shutil.which("git")
    if git is None:
        raise SystemExit("caucus guard: git is not installed (or not on PATH)")
    done = subprocess.run(  # noqa: S603 - git, with our own arguments
        [git, "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"caucus guard: {repo} is not a git repository ({done.stderr.strip()})")
    return done.stdout


def _hooks(repo: Path) -> Path:
    found = Path(_git(repo, "rev-parse", "--git-path", "hooks").strip())
    return found if found.is_absolute() else (repo / found).resolve()


def _script(hub: str | None, name: str | None) -> str:
    """The hook: the chained one first, then the check, by this Python (the hook runs
    without the agent's virtual environment on PATH)."""
    command = [sys.executable, "-m", "caucus", "guard", "check"]
    if hub:
        command += ["--hub", hub]
    if name:
        command += ["--as", name]
    return "\n".join(
        [
            "#!/bin/sh",
            MARK,
            f'chained="$(dirname "$0")/{CHAINED}"',
            'if [ -x "$chained" ]; then "$chained" "$@" || exit $?; fi',
            "exec " + shlex.join(command),
            "",
        ]
    )


@guard_app.command("install")
def install(
    repo: Annotated[Path, typer.Option(help="the repository (default: here)")] = Path("."),
    hub: Annotated[
        str | None, typer.Option(help="the hub's URL, if not $CAUCUS_HUB at commit time")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--as", help="the committing agent, if not $CAUCUS_NAME at commit time"),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Install the pre-commit hook (an existing hook is kept and runs first)."""
    hooks = _hooks(repo)
    hooks.mkdir(parents=True, exist_ok=True)
    hook = hooks / "pre-commit"
    chained = None
    if hook.exists() and MARK not in hook.read_text(errors="replace"):
        chained = hooks / CHAINED
        if chained.exists():
            raise SystemExit(
                f"caucus guard: both {hook} and {chained} exist; merge them by hand first"
            )
        hook.rename(chained)
    hook.write_text(_script(hub, name))
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    report = {"hook": str(hook), "chained": str(chained) if chained else None}
    if json_output:
        print(json.dumps(report))
        return
    print(f"installed {hook}" + (f" (your hook now runs first, as {chained})" if chained else ""))
    print("a commit touching a file another agent holds exclusively is now refused;")
    print("CAUCUS_GUARD=off git commit ... lets one through")


@guard_app.command("uninstall")
def uninstall(
    repo: Annotated[Path, typer.Option(help="the repository (default: here)")] = Path("."),
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Remove the hook, putting back one it had chained."""
    hooks = _hooks(repo)
    hook, chained = hooks / "pre-commit", hooks / CHAINED
    removed = hook.exists() and MARK in hook.read_text(errors="replace")
    if removed:
        hook.unlink()
        if chained.exists():
            chained.rename(hook)
    report = {"removed": removed, "restored": removed and hook.exists()}
    if json_output:
        print(json.dumps(report))
        return
    print(f"removed {hooks / 'pre-commit'}" if removed else "no caucus guard hook installed")


def _staged(repo: Path) -> list[str]:
    out = _git(repo, "diff", "--cached", "--name-only", "--no-renames", "-z")
    return [p for p in out.split("\0") if p]


def _left(seconds: float) -> str:
    minutes = max(0, int(seconds // 60))
    return f"{minutes} min left" if minutes < 120 else f"{minutes // 60} h left"


@guard_app.command("check")
def check(
    repo: Annotated[Path, typer.Option(help="the repository (default: here)")] = Path("."),
    hub: Annotated[str, typer.Option(help="the hub's URL", envvar="CAUCUS_HUB")] = DEFAULT_HUB,
    name: Annotated[
        str | None,
        typer.Option("--as", envvar="CAUCUS_NAME", help="the committing agent"),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Refuse (exit 1) if a staged file is exclusively reserved by another agent."""
    import asyncio

    if os.environ.get("CAUCUS_GUARD", "").lower() in ("off", "0", "no", "false"):
        _say(json_output, {"allowed": True, "overridden": True, "blocked": []}, "")
        return
    files = _staged(repo)
    report: dict[str, Any] = {"allowed": True, "files": len(files), "blocked": []}
    if not files:
        _say(json_output, report, "")
        return
    try:
        blocked = asyncio.run(_blocked(hub, files, name))
    except Exception as exc:
        report["unchecked"] = f"{type(exc).__name__}: {exc}"
        _say(
            json_output,
            report,
            f"caucus guard: could not ask the hub at {hub} ({exc}); the commit goes through "
            "unchecked",
        )
        return
    report["blocked"] = blocked
    report["allowed"] = not blocked
    if not blocked:
        _say(json_output, report, "")
        return
    now = time.time()
    lines = ["caucus guard: this commit touches files another agent holds exclusively:"]
    for b in blocked:
        r = b["reservation"]
        line = (
            f"  {b['path']}: {r['holder']} holds {r['pattern']!r} ({_left(r['expires_at'] - now)})"
        )
        if r.get("reason"):
            line += f": {r['reason']}"
        lines.append(line)
    if name is None:
        lines.append("(no agent named: set CAUCUS_NAME, or install with --as, so yours count)")
    lines.append(
        "Ask the holder, wait for the release, or commit with CAUCUS_GUARD=off to override."
    )
    _say(json_output, report, "\n".join(lines), failed=True)
    raise typer.Exit(1)


async def _blocked(hub: str, files: list[str], name: str | None) -> list[dict[str, Any]]:
    from caucus.client import HubClient

    async with HubClient(hub, timeout=5.0) as client:
        found = await client.blocked(files, holder=name)
    return [b.model_dump(mode="json") for b in found]


def _say(json_output: bool, report: dict[str, Any], text: str, *, failed: bool = False) -> None:
    if json_output:
        print(json.dumps(report))
    elif text:
        print(text, file=sys.stderr if failed or "unchecked" in report else sys.stdout)
