"""A throwaway PostgreSQL server for tests and benchmarks (issue 14).

`throwaway_cluster()` starts one from Debian's `postgresql` package in a temporary folder, on
a free loopback port, and removes it afterwards. `initdb` refuses to run as root, so as root the
cluster belongs to the `postgres` system user (the package creates it) and its commands run as
that user. `CAUCUS_TEST_POSTGRES=<dsn>` points at an existing server instead. Each caller gets
its own database: `fresh_database(server)`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ENV = "CAUCUS_TEST_POSTGRES"


class NoPostgres(RuntimeError):
    """No server is configured and none can be started here; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Server:
    admin_dsn: str  # a superuser's connection to the maintenance database
    # A throwaway cluster's postmaster and log, so a test run can tell when it dies and why.
    pid: int | None = None
    log: Path | None = None

    def dsn(self, database: str) -> str:
        base, _, _ = self.admin_dsn.rpartition("/")
        return f"{base}/{database}"


def _bin(tool: str) -> str:
    found = shutil.which(tool)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{tool}"))
    if not candidates:
        raise NoPostgres(
            f"no {tool}: install PostgreSQL (Debian: apt-get install postgresql; ./dev test "
            f"does it) or set {ENV} to a server's DSN"
        )
    return candidates[-1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_owner(cmd: list[str], owner: str | None) -> list[str]:
    if owner is None:
        return cmd
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", owner, "--", *cmd]
    return ["su", owner, "-s", "/bin/sh", "-c", " ".join(cmd)]


@contextlib.contextmanager
def throwaway_cluster(*, durable: bool = False) -> Iterator[Server]:
    """A server of our own for the length of the block. Not `durable` (the default for
    tests), it skips fsync: the tests check what the hub does, not the disk."""
    configured = os.environ.get(ENV)
    if configured:
        yield Server(configured)
        return
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    owner = _owner()
    folder = Path(tempfile.mkdtemp(prefix="caucus-pg-"))
    data = folder / "data"
    if owner is not None:
        shutil.chown(folder, owner)
    port = _free_port()
    password = secrets.token_hex(12)
    pwfile = folder / "pw"
    pwfile.write_text(password + "\n")
    if owner is not None:
        shutil.chown(pwfile, owner)
    log = folder / "server.log"
    try:
        init = [initdb, "-D", str(data), "-U", "caucus", "--pwfile", str(pwfile)]
        init += ["-A", "scram-sha-256", "-E", "UTF8", "--no-instructions"]
        subprocess.run(_as_owner(init, owner), check=True, capture_output=True)  # noqa: S603
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c max_connections=200"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        subprocess.run(  # noqa: S603 - our own tools, found on disk
            _as_owner(
                [pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start"], owner
            ),
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or b"").decode(errors="replace").strip()[-500:]
        shutil.rmtree(folder, ignore_errors=True)
        raise NoPostgres(f"could not start a PostgreSQL cluster: {detail}") from None
    pid = int((data / "postmaster.pid").read_text().split()[0])
    try:
        yield Server(f"postgresql://caucus:{password}@127.0.0.1:{port}/postgres", pid, log)
    finally:
        _stop(pg_ctl, data, pid, owner)
        shutil.rmtree(folder, ignore_errors=True)


def _owner() -> str | None:
    """Who owns a cluster we start: as root, the `postgres` user (initdb refuses root)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise NoPostgres(
            "running as root, and there is no 'postgres' user to own a cluster: install "
            f"Debian's postgresql package, or set {ENV}"
        ) from None
    return "postgres"


def _stop(pg_ctl: str, data: Path, pid: int, owner: str | None) -> None:
    # A server that died (a test killed it) is not waited for: pg_ctl would wait a minute
    # for the pid file a dead postmaster never removes.
    if _running(pid):
        stop = [pg_ctl, "-D", str(data), "-m", "immediate", "-t", "10", "stop"]
        subprocess.run(_as_owner(stop, owner), capture_output=True)  # noqa: S603
    if _running(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie, dead but not yet reaped, is not)."""
    if not Path("/proc").is_dir():  # no /proc here: ask the kernel (a zombie counts as alive)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def fresh_database(server: Server, prefix: str = "caucus") -> str:
    """A new empty database on `server`; its DSN."""
    import psycopg

    name = f"{prefix}_{int(time.time() * 1000) % 10**9}_{secrets.token_hex(3)}"
    with psycopg.connect(server.admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    return server.dsn(name)
