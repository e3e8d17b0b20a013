"""`caucus guard`: git hooks that refuse a commit, a merge, a cherry-pick, a rebase's pick or a
fast-forward bringing in files another agent holds exclusively reserved (issues 34 and 47).

`install` writes the hooks into a repository's hooks folder (wherever `core.hooksPath` points;
`caucus.guardhooks` says which hook sees what), keeping any that was there, run first;
`uninstall` puts them back. Each asks the hub (`POST /reservations/blocked`, the file list in
pieces so no change is too large to ask about) which of the files another agent's exclusive
reservation covers, and stops the change naming holder, pattern, time left and reason. The
acting agent is `$CAUCUS_NAME` (or the name given to `install --as`); its own reservations
never block it. `CAUCUS_GUARD=off` lets one change through. The guard fails closed: a hub
that answers with a refusal of any kind stops the change, saying what it answered; only a
hub it cannot reach at all (refused, or no answer within 5 s) lets it through, with a
warning (the guard protects work; a hub that is down must not stop it).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from caucus import guardhooks
from caucus.defaults import DEFAULT_HUB

guard_app = typer.Typer(
    help="Git hooks that keep commits, merges and rebases off files other agents reserved.",
    no_args_is_help=True,
)

# Files asked about per request: well under the hub's body limit (64 KiB) and its list cap.
CHUNK_FILES = 500
CHUNK_BYTES = 32 * 1024


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
    """Install the hooks (commits, merges, cherry-picks, rebases, fast-forwards); hooks that
    were there are kept and run first."""
    chained = guardhooks.install(repo, hub, name)
    folder = guardhooks.hooks_folder(repo)
    kept = {h: path for h, path in chained.items() if path}
    if json_output:
        print(json.dumps({"hooks": [str(folder / h) for h in chained], "chained": kept}))
        return
    print(f"installed {', '.join(chained)} in {folder}")
    for hook, path in kept.items():
        print(f"  your {hook} now runs first, as {path}")
    print("a change bringing in a file another agent holds exclusively is now refused;")
    print("CAUCUS_GUARD=off git ... lets one through")


@guard_app.command("uninstall")
def uninstall(
    repo: Annotated[Path, typer.Option(help="the repository (default: here)")] = Path("."),
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Remove the hooks, putting back those they had chained."""
    removed, restored = guardhooks.uninstall(repo)
    report = {"removed": removed, "restored": restored}
    if json_output:
        print(json.dumps(report))
        return
    print(f"removed the guard's hooks from {repo}" if removed else "no caucus guard installed")


def _left(seconds: float) -> str:
    minutes = max(0, int(seconds // 60))
    return f"{minutes} min left" if minutes < 120 else f"{minutes // 60} h left"


def _files(repo: Path, ref_update: bool, range_: str | None) -> list[str]:
    if ref_update:
        return guardhooks.fast_forwards(repo, sys.stdin.read())
    if range_:
        old, sep, new = range_.partition("..")
        if not sep or not old:
            raise typer.BadParameter("give a range as OLD..NEW (NEW defaults to HEAD)")
        return guardhooks.between(repo, old, new or "HEAD")
    return guardhooks.staged(repo)


@guard_app.command("check")
def check(
    repo: Annotated[Path, typer.Option(help="the repository (default: here)")] = Path("."),
    hub: Annotated[str, typer.Option(help="the hub's URL", envvar="CAUCUS_HUB")] = DEFAULT_HUB,
    name: Annotated[
        str | None,
        typer.Option("--as", envvar="CAUCUS_NAME", help="the committing agent"),
    ] = None,
    range_: Annotated[
        str | None,
        typer.Option("--range", help="check the files OLD..NEW changes, not the staged ones"),
    ] = None,
    ref_update: Annotated[
        bool, typer.Option("--ref-update", hidden=True, help="a reference transaction's lines")
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Refuse (exit 1) if a staged file (or one the range changes) is exclusively reserved by
    another agent, or the hub refuses to say; let it through if the hub cannot be reached."""
    import asyncio

    from caucus.errors import HubUnavailable

    if os.environ.get("CAUCUS_GUARD", "").lower() in ("off", "0", "no", "false"):
        _say(json_output, {"allowed": True, "overridden": True, "blocked": []}, "")
        return
    files = _files(repo, ref_update, range_)
    report: dict[str, Any] = {"allowed": True, "files": len(files), "blocked": []}
    if not files:
        _say(json_output, report, "")
        return
    try:
        blocked = asyncio.run(_blocked(hub, files, name))
    except HubUnavailable as exc:
        report["unchecked"] = str(exc)
        _say(
            json_output,
            report,
            f"caucus guard: could not reach the hub at {hub} ({exc}); the change goes through "
            "unchecked",
        )
        return
    except Exception as exc:  # the hub answered, but not with what the guard needs: closed
        report.update(allowed=False, refused=f"{type(exc).__name__}: {exc}")
        _say(
            json_output,
            report,
            f"caucus guard: the hub at {hub} refused the check ({exc}), so the change is "
            "stopped; fix what it says, or go ahead with CAUCUS_GUARD=off",
            failed=True,
        )
        raise typer.Exit(1) from None
    report["blocked"] = blocked
    report["allowed"] = not blocked
    if not blocked:
        _say(json_output, report, "")
        return
    _refuse(json_output, report, blocked, name, fast_forward=ref_update)


def _refuse(
    json_output: bool,
    report: dict[str, Any],
    blocked: list[dict[str, Any]],
    name: str | None,
    *,
    fast_forward: bool,
) -> None:
    now = time.time()
    lines = ["caucus guard: this change touches files another agent holds exclusively:"]
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
        "Ask the holder, wait for the release, or go ahead with CAUCUS_GUARD=off to override."
    )
    if fast_forward:  # git checked the files out before it asked to move the branch
        lines.append("The branch did not move; `git reset --merge` puts the files back.")
    _say(json_output, report, "\n".join(lines), failed=True)
    raise typer.Exit(1)


async def _blocked(hub: str, files: list[str], name: str | None) -> list[dict[str, Any]]:
    """What the hub says blocks, asked in pieces: any number of files fits."""
    from caucus.client import HubClient

    found: list[dict[str, Any]] = []
    async with HubClient(hub, timeout=5.0) as client:
        for chunk in _chunks(files):
            found += [b.model_dump(mode="json") for b in await client.blocked(chunk, holder=name)]
    return found


def _chunks(files: list[str]) -> list[list[str]]:
    chunks: list[list[str]] = [[]]
    size = 0
    for path in files:
        cost = len(path.encode()) + 4
        if chunks[-1] and (len(chunks[-1]) >= CHUNK_FILES or size + cost > CHUNK_BYTES):
            chunks.append([])
            size = 0
        chunks[-1].append(path)
        size += cost
    return chunks


def _say(json_output: bool, report: dict[str, Any], text: str, *, failed: bool = False) -> None:
    if json_output:
        print(json.dumps(report))
    elif text:
        print(text, file=sys.stderr if failed or "unchecked" in report else sys.stdout)
