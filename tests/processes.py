"""The processes a test run starts, kept on a short lead (issue 29).

- `Helper`: a server a test or a tier starts (a `caucus hub`, the model server, ngircd, an
  agent): its own process group, its output in a log file, stopped with its whole group. One
  that dies unasked fails the test that waits on it at once, naming its exit status and the end
  of its log (`check()`, called by every wait in `tests/waiting.py` and around every async test).
- The run's process tree: pytest makes itself the subreaper of everything it starts (Linux), so
  an orphan (a server whose parent was killed, a daemonised postmaster) stays in the tree
  instead of vanishing under init. After each test, a process the test started that is still
  alive is killed and the test errors; at the end of the run anything left fails the run.

Module state is the point here: one registry per test process (each xdist worker has its own).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

PR_SET_CHILD_SUBREAPER = 36
PROC = Path("/proc")


class HelperDied(AssertionError):
    """A helper server ended while a test depended on it; the message says how."""


class Watched(Protocol):
    name: str

    def death(self) -> str | None:
        """None while it runs (or was stopped on purpose); otherwise what happened to it."""


_LOGS: list[Path] = []


def log_dir() -> Path:
    """This test process's folder of helper logs (removed at the end of a green run)."""
    if not _LOGS:
        _LOGS.append(Path(tempfile.mkdtemp(prefix="caucus-test-logs-")))
    return _LOGS[0]


def remove_logs() -> None:
    for folder in _LOGS:
        shutil.rmtree(folder, ignore_errors=True)
    _LOGS.clear()


def log_path(stem: str) -> Path:
    """A new log file for a helper named `stem`."""
    folder = log_dir()
    n = sum(1 for _ in folder.glob(f"{stem}-*.log"))
    return folder / f"{stem}-{n}.log"


def _tail(path: Path | None, size: int = 3000) -> str:
    if path is None or not path.exists():
        return "(no log)"
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - size))
        text = f.read().decode(errors="replace")
    return text.strip() or "(the log is empty)"


def describe_exit(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with status {code}"


class Helper:
    """A process started in its own session (so in its own process group), with its stdout and
    stderr appended to `log` unless the caller takes stdout through a pipe."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        log: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        stdin: int | IO[bytes] | None = subprocess.DEVNULL,
        stdout_pipe: bool = False,
        text: bool = False,
        lasting: bool = False,
        expect_exit: bool = False,
    ) -> None:
        self.name = name
        self.log = log
        # A helper that outlives one test (a session's PostgreSQL, the model server) is not
        # that test's leak; it is stopped by the fixture that made it.
        self.lasting = lasting
        # Some helpers end by themselves on purpose (a hub run under a fault injection).
        self.expect_exit = expect_exit
        self._asked = False
        self._reported = False
        log.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = log.open("ab")
        self.proc: subprocess.Popen[bytes] | subprocess.Popen[str] = subprocess.Popen(
            list(argv),
            stdin=stdin,
            stdout=subprocess.PIPE if stdout_pipe else self._log_file,
            stderr=self._log_file,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            text=text,
            start_new_session=True,
        )
        REGISTRY.add(self)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def death(self) -> str | None:
        code = self.proc.poll()
        if code is None or self._asked or self.expect_exit:
            return None
        return f"{self.name} (pid {self.pid}) {describe_exit(code)}; its log ends:\n{self.tail()}"

    def tail(self, size: int = 3000) -> str:
        self._log_file.flush()
        return _tail(self.log, size)

    def signal(self, sig: int) -> None:
        """Send `sig` to the helper alone, as a test does on purpose (the death is asked for)."""
        self._asked = True
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)

    def stop(self, grace: float = 5.0) -> int:
        """SIGTERM to the whole group, SIGKILL after `grace` s; the exit status."""
        self._asked = True
        if self.proc.poll() is None:
            _signal_group(self.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(grace)
        # Whatever the helper started in its group goes with it, even once it has exited.
        _signal_group(self.pid, signal.SIGKILL)
        code = self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stdin):
            if stream is not None:
                stream.close()
        self._log_file.close()
        REGISTRY.discard(self)
        return code


@dataclass
class PidWatch:
    """A server that is not our child (PostgreSQL's postmaster, started by pg_ctl)."""

    name: str
    pid: int
    log: Path | None
    lasting: bool = True
    _asked: bool = False
    _reported: bool = False

    def __post_init__(self) -> None:
        REGISTRY.add(self)

    def death(self) -> str | None:
        if self._asked:
            return None
        info = read_proc(self.pid)
        if info is not None and info.state != "Z":
            return None
        return f"{self.name} (pid {self.pid}) is gone; its log ends:\n{_tail(self.log)}"

    def stop(self) -> None:
        self._asked = True
        REGISTRY.discard(self)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class Registry:
    """The helpers now running in this test process."""

    def __init__(self) -> None:
        self._helpers: list[Helper | PidWatch] = []

    def add(self, helper: Helper | PidWatch) -> None:
        self._helpers.append(helper)

    def discard(self, helper: Helper | PidWatch) -> None:
        with contextlib.suppress(ValueError):
            self._helpers.remove(helper)

    def helpers(self) -> list[Helper | PidWatch]:
        return list(self._helpers)

    def check(self) -> None:
        """Raise HelperDied for a helper that died unasked, once per death: the test waiting
        on it fails at once; later tests that need it fail on their own, annotated."""
        for helper in self._helpers:
            if helper._reported:
                continue
            story = helper.death()
            if story is not None:
                helper._reported = True
                raise HelperDied(story)

    def deaths(self) -> list[str]:
        return [story for h in self._helpers if (story := h.death()) is not None]

    def lasting_pids(self) -> set[int]:
        return {h.pid for h in self._helpers if h.lasting}


REGISTRY = Registry()


def check() -> None:
    REGISTRY.check()


# --- the run's process tree ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proc:
    pid: int
    ppid: int
    pgid: int
    state: str
    start: int  # clock ticks after boot: with the pid, names one process for good

    @property
    def key(self) -> tuple[int, int]:
        return self.pid, self.start

    def command(self) -> str:
        try:
            raw = (PROC / str(self.pid) / "cmdline").read_bytes()
        except OSError:
            return "?"
        return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:300] or "?"


def read_proc(pid: int) -> Proc | None:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold anything, parentheses included.
    fields = stat[stat.rindex(")") + 2 :].split()
    return Proc(pid, int(fields[1]), int(fields[2]), fields[0], int(fields[19]))


def process_table() -> dict[int, Proc]:
    table: dict[int, Proc] = {}
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if entry.name.isdigit() and (info := read_proc(int(entry.name))) is not None:
            table[info.pid] = info
    return table


def descendants(root: int, table: Mapping[int, Proc] | None = None) -> dict[int, Proc]:
    """Every live (not zombie) process below `root`."""
    table = process_table() if table is None else table
    children: dict[int, list[Proc]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info)
    found: dict[int, Proc] = {}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child.pid not in found:
                found[child.pid] = child
                todo.append(child.pid)
    return {pid: p for pid, p in found.items() if p.state != "Z"}


def become_subreaper() -> bool:
    """Orphans of our descendants come to us rather than to init (Linux only)."""
    if not PROC.is_dir():
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def reap_orphans(keep: Iterable[int] = ()) -> None:
    """Collect the exit of zombies reparented to us that nobody waits for, so the tree stays
    readable; children a Popen or asyncio still waits on are left to them."""
    mine = os.getpid()
    kept = set(keep)
    for info in process_table().values():
        if info.ppid == mine and info.state == "Z" and info.pid not in kept:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(info.pid, os.WNOHANG)


def outliving(before: Iterable[tuple[int, int]], exempt: Iterable[int]) -> list[Proc]:
    """Descendants of this process that were not there before and are not (below) a lasting
    helper."""
    table = process_table()
    mine = descendants(os.getpid(), table)
    spared: set[int] = set()
    for pid in exempt:
        if pid in mine:
            spared.add(pid)
            spared.update(descendants(pid, table))
    seen = set(before)
    return [p for p in mine.values() if p.key not in seen and p.pid not in spared]


def kill_all(procs: Iterable[Proc]) -> None:
    for p in procs:
        if p.pgid == p.pid:  # a group leader: whatever it started in its group goes too
            _signal_group(p.pgid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p.pid, signal.SIGKILL)


def wait_gone(procs: list[Proc], within: float) -> list[Proc]:
    """The ones still alive after `within` s (a process told to stop may take a moment)."""
    deadline = time.monotonic() + within
    left = procs
    while left:
        left = [p for p in left if _alive(p)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return left


def _alive(p: Proc) -> bool:
    now = read_proc(p.pid)
    return now is not None and now.key == p.key and now.state != "Z"


def leftovers(marker: str) -> list[Proc]:
    """Live processes whose environment carries `CAUCUS_TEST_RUN=marker` (this one aside)."""
    needle = f"CAUCUS_TEST_RUN={marker}".encode()
    found = []
    for info in process_table().values():
        if info.pid == os.getpid() or info.state == "Z":
            continue
        try:
            environ = (PROC / str(info.pid) / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(info)
    return found


def main(argv: list[str]) -> int:
    """`python -m tests.processes leftovers MARKER`: kill what a test run left running and
    say what it was; exit 1 if there was anything."""
    if len(argv) != 2 or argv[0] != "leftovers":
        print("usage: python -m tests.processes leftovers MARKER", file=sys.stderr)
        return 2
    left = leftovers(argv[1])
    if not left:
        print("nothing the run started is still alive", file=sys.stderr)
        return 0
    kill_all(left)
    print("processes of the test run were still alive (now killed):", file=sys.stderr)
    for p in left:
        print(f"  pid {p.pid}: {p.command()}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
