"""The git side of `caucus guard` (issue 34, issue 47): the hooks it installs, and the files
each kind of change brings into a branch.

Git runs a different hook for each way a change lands, and the guard is in all of them:
- `pre-commit`: a commit (its staged files);
- `pre-merge-commit`: a merge that commits by itself (the files the merge brings in; a merge
  concluded after conflicts is a commit, seen by `pre-commit`);
- `prepare-commit-msg`: each commit a cherry-pick, a revert or a rebase makes (they run no
  `pre-commit`); it acts only while one is under way (`CHERRY_PICK_HEAD`, `REVERT_HEAD`);
- `pre-applypatch`: each patch `git am` (and `git rebase --apply`) commits;
- `reference-transaction` (git 2.28+): a merge or pull that fast-forwards, which makes no
  commit at all (the files between the branch's old and new commits).
Each hook keeps one that was there before as `<hook>.caucus-chained`, run first. What the
guard cannot see: `--no-verify`, and refs moved without a merge (`git reset`, `git
update-ref`, a push into the repository, tools that run no hooks). `caucus guard check
--range A..B` checks those by hand.
"""

from __future__ import annotations

import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

MARK = "# caucus guard: installed by `caucus guard install`"
CHAINED = ".caucus-chained"
ZERO = "0" * 40

# What each hook checks, and the shell that decides first whether there is anything to check
# (a hook runs on every commit or ref update: Python starts only when it must).
HOOKS: dict[str, tuple[str, ...]] = {
    "pre-commit": (),
    "pre-merge-commit": (),
    "prepare-commit-msg": (
        'seq=no; for head in CHERRY_PICK_HEAD REVERT_HEAD; do [ -e "$(git rev-parse '
        '--git-path $head)" ] && seq=yes; done',
        '[ "$seq" = yes ] || exit 0',
    ),
    "pre-applypatch": (),
    "reference-transaction": (
        '[ "$1" = prepared ] || exit 0',
        'case "$GIT_REFLOG_ACTION" in merge*|pull*) ;; *) exit 0 ;; esac',
    ),
}
REF_HOOK = "reference-transaction"


def git(repo: Path, *args: str) -> str:
    found = shutil.which("git")
    if found is None:
        raise SystemExit("caucus guard: git is not installed (or not on PATH)")
    done = subprocess.run(  # noqa: S603 - git, with our own arguments
        [found, "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"caucus guard: git {args[0]} failed in {repo}: {done.stderr.strip()}")
    return done.stdout


def hooks_folder(repo: Path) -> Path:
    found = Path(git(repo, "rev-parse", "--git-path", "hooks").strip())
    return found if found.is_absolute() else (repo / found).resolve()


def script(hook: str, hub: str | None, name: str | None) -> str:
    """A hook: the chained one first, then the check, by this Python (the hook runs without
    the agent's virtual environment on PATH). The reference transaction's lines on stdin go
    to both."""
    command = [sys.executable, "-m", "caucus", "guard", "check"]
    if hub:
        command += ["--hub", hub]
    if name:
        command += ["--as", name]
    chained = f'"$(dirname "$0")/{hook}{CHAINED}"'
    if hook != REF_HOOK:
        return "\n".join(
            [
                "#!/bin/sh",
                MARK,
                f'if [ -x {chained} ]; then {chained} "$@" || exit $?; fi',
                *HOOKS[hook],
                "exec " + shlex.join(command),
                "",
            ]
        )
    return "\n".join(
        [
            "#!/bin/sh",
            MARK,
            'input="$(cat)"',
            f"if [ -x {chained} ]; then",
            f'  printf "%s\\n" "$input" | {chained} "$@" || exit $?',
            "fi",
            *HOOKS[hook],
            'printf "%s\\n" "$input" | ' + shlex.join([*command, "--ref-update"]),
            "",
        ]
    )


def install(repo: Path, hub: str | None, name: str | None) -> dict[str, str | None]:
    """Install every hook; for each, the hook that was there before (now chained) or None."""
    folder = hooks_folder(repo)
    folder.mkdir(parents=True, exist_ok=True)
    clashes = [
        folder / f"{h}{CHAINED}"
        for h in HOOKS
        if _foreign(folder / h) and (folder / f"{h}{CHAINED}").exists()
    ]
    if clashes:
        raise SystemExit(
            f"caucus guard: both {clashes[0].name.removesuffix(CHAINED)} and {clashes[0]} "
            "exist; merge them by hand first"
        )
    chained: dict[str, str | None] = {}
    for hook in HOOKS:
        path = folder / hook
        chained[hook] = None
        if _foreign(path):
            kept = folder / f"{hook}{CHAINED}"
            path.rename(kept)
            chained[hook] = str(kept)
        path.write_text(script(hook, hub, name))
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return chained


def uninstall(repo: Path) -> tuple[bool, bool]:
    """Remove the hooks, putting back those they chained: (removed any, restored any)."""
    folder = hooks_folder(repo)
    removed = restored = False
    for hook in HOOKS:
        path = folder / hook
        if path.exists() and MARK in path.read_text(errors="replace"):
            path.unlink()
            removed = True
            kept = folder / f"{hook}{CHAINED}"
            if kept.exists():
                kept.rename(path)
                restored = True
    return removed, restored


def _foreign(path: Path) -> bool:
    return path.exists() and MARK not in path.read_text(errors="replace")


# --- what a change brings in ------------------------------------------------------------------
def staged(repo: Path) -> list[str]:
    """The files the index changes from HEAD (renames as both of their paths)."""
    return _names(git(repo, "diff", "--cached", "--name-only", "--no-renames", "-z"))


def between(repo: Path, old: str, new: str) -> list[str]:
    """The files that differ between two commits."""
    return _names(git(repo, "diff", "--name-only", "--no-renames", "-z", old, new))


def fast_forwards(repo: Path, lines: str) -> list[str]:
    """From a reference transaction's lines (`old new ref`), the files each branch moved
    forward without a commit of its own brings in (a merge commit was checked when made)."""
    files: list[str] = []
    for line in lines.splitlines():
        parts = line.split()
        if len(parts) != 3 or not parts[2].startswith("refs/heads/"):
            continue
        old, new, _ = parts
        if ZERO in (old, new) or _parents(repo, new) > 1 or not _ancestor(repo, old, new):
            continue
        files += between(repo, old, new)
    return list(dict.fromkeys(files))


def _ancestor(repo: Path, old: str, new: str) -> bool:
    found = shutil.which("git") or "git"
    done = subprocess.run(  # noqa: S603 - git, with our own arguments
        [found, "-C", str(repo), "merge-base", "--is-ancestor", old, new],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def _parents(repo: Path, commit: str) -> int:
    return len(git(repo, "rev-list", "--parents", "-n", "1", commit).split()) - 1


def _names(out: str) -> list[str]:
    return [p for p in out.split("\0") if p]
