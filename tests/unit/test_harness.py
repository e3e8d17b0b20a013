"""The suite's own lead on its processes (issue 29): a helper server that dies fails the wait
on it at once, naming its exit and the end of its log; a process a test leaves running is
killed and the test errors; anything alive at the end of a run fails the run."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from caucus.testing.postgres import NoPostgres, throwaway_cluster
from tests.acceptance.hubproc import start_hub
from tests.processes import Helper, HelperDied, PidWatch, log_path, read_proc
from tests.waiting import eventually, watching, within

ROOT = Path(__file__).resolve().parents[2]
# A server that says it is up, then serves nothing until it is killed.
SERVER = "import sys, time; print('listening', flush=True); time.sleep(3600)"


def helper(name: str = "the test server") -> Helper:
    return Helper(name, [sys.executable, "-c", SERVER], log=log_path("harness"))


async def started(server: Helper) -> None:
    await eventually(lambda: "listening" in server.tail(), what="the server to start")


async def test_a_wait_on_anything_ends_with_the_helper_that_died() -> None:
    server = helper()
    try:
        await started(server)
        never = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0.2, os.kill, server.pid, signal.SIGKILL)
        with pytest.raises(HelperDied) as died:
            await within(never, 300, "an answer the server will never give")
        assert "the test server" in str(died.value)
        assert "killed by SIGKILL" in str(died.value)
        assert "listening" in str(died.value)  # the end of its log
    finally:
        server.stop()


async def test_a_watched_block_is_cancelled_when_the_helper_dies() -> None:
    server = helper()
    try:
        await started(server)
        asyncio.get_running_loop().call_later(0.2, os.kill, server.pid, signal.SIGTERM)
        with pytest.raises(HelperDied, match="killed by SIGTERM"):
            async with watching():
                await asyncio.Event().wait()  # waits for ever, on nothing the helper owns
    finally:
        server.stop()


async def test_a_stopped_or_signalled_helper_is_no_death() -> None:
    server = helper()
    await started(server)
    server.signal(signal.SIGKILL)  # asked for, as a crash test does
    server.proc.wait()
    assert server.death() is None
    await eventually(lambda: True)  # checks every helper, and none complains
    server.stop()


async def test_a_hub_killed_under_a_test_fails_its_wait_with_its_exit_and_log(
    tmp_path: Path,
) -> None:
    hub = start_hub(tmp_path / "hub.db")
    try:
        os.kill(hub.pid, signal.SIGKILL)  # not through the test's own handle: unasked
        with pytest.raises(HelperDied) as died:
            await eventually(lambda: False, within=300, what="something from the hub")
        assert "caucus hub" in str(died.value)
        assert "killed by SIGKILL" in str(died.value)
    finally:
        hub.stop()


def run_inner(tmp_path: Path, test_source: str) -> subprocess.CompletedProcess[str]:
    """A pytest run of `test_source` with the suite's process plugin."""
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(test_source), "utf-8")
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-p", "tests.process_plugin", "--rootdir", str(tmp_path), "test_inner.py"),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_process_a_passing_test_leaves_running_is_killed_and_the_test_errors(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pid"
    run = run_inner(
        tmp_path,
        f"""
        import subprocess, sys
        def test_leaks():
            proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            open({str(pidfile)!r}, "w").write(str(proc.pid))
        """,
    )
    assert run.returncode == 1, run.stdout
    assert "1 passed, 1 error" in run.stdout
    assert "processes the test started outlived it (now killed)" in run.stdout
    pid = int(pidfile.read_text())
    assert read_proc(pid) is None or read_proc(pid).state == "Z"  # type: ignore[union-attr]


def test_a_grandchild_orphaned_by_its_parent_is_found_and_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    run = run_inner(
        tmp_path,
        f"""
        import subprocess, sys
        def test_orphans():
            # The child starts a grandchild in a session of its own and exits at once.
            code = (
                "import subprocess, sys; "
                "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
                "start_new_session=True); "
                "open({str(pidfile)!r}, 'w').write(str(p.pid))"
            )
            subprocess.run([sys.executable, "-c", code], check=True)
        """,
    )
    assert "processes the test started outlived it (now killed)" in run.stdout, run.stdout
    pid = int(pidfile.read_text())
    assert read_proc(pid) is None or read_proc(pid).state == "Z"  # type: ignore[union-attr]


def test_a_process_alive_at_the_end_of_the_run_fails_the_run(tmp_path: Path) -> None:
    run = run_inner(
        tmp_path,
        """
        import subprocess, sys
        import pytest
        from tests.processes import Helper, log_path

        @pytest.fixture(scope="session")
        def server():
            # lasting, so no one test owns it; and its fixture forgets to stop it
            yield Helper("forgotten", [sys.executable, "-c", "import time; time.sleep(600)"],
                         log=log_path("forgotten"), lasting=True)

        def test_uses(server):
            assert server.proc.poll() is None
        """,
    )
    assert run.returncode == 1, run.stdout
    assert "1 passed" in run.stdout
    assert "processes of the run were still alive at its end (now killed)" in run.stdout


async def test_a_postgresql_server_that_dies_fails_the_wait_naming_it_and_its_log() -> None:
    try:
        cluster = throwaway_cluster()
        server = cluster.__enter__()
    except NoPostgres as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the PostgreSQL tier cannot run: {exc}")
        pytest.skip(str(exc))
    try:
        assert server.pid is not None
        watch = PidWatch("a PostgreSQL server", server.pid, server.log)
        os.kill(server.pid, signal.SIGKILL)
        with pytest.raises(HelperDied) as died:
            await eventually(lambda: False, within=300, what="an answer from PostgreSQL")
        assert f"a PostgreSQL server (pid {server.pid}) is gone" in str(died.value)
        assert "database system is ready to accept connections" in str(died.value)  # its log
        watch.stop()
    finally:
        cluster.__exit__(None, None, None)


def test_the_run_wide_check_finds_a_process_that_escaped_pytest_by_its_marker() -> None:
    marker = f"harness-{os.getpid()}"
    escaped = subprocess.Popen(  # its own session, and no parent of ours waits for it
        [sys.executable, "-c", "import time; time.sleep(600)"],
        env={**os.environ, "CAUCUS_TEST_RUN": marker},
        start_new_session=True,
    )
    try:
        check = subprocess.run(
            [sys.executable, "-m", "tests.processes", "leftovers", marker],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert check.returncode == 1, check.stderr
        assert f"pid {escaped.pid}" in check.stderr
        assert escaped.wait(timeout=30) == -signal.SIGKILL
        again = subprocess.run(
            [sys.executable, "-m", "tests.processes", "leftovers", marker],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode == 0, again.stderr
    finally:
        if escaped.poll() is None:
            escaped.kill()
            escaped.wait()
