"""The pytest side of `tests/processes.py`: every async test runs under `watching()`, a
failure is told which helper died, no process a test started outlives it, and the run fails if
anything it started is still alive at the end."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Coroutine, Generator, Iterator
from typing import Any

import pytest

from tests import processes
from tests.waiting import scaled, watching

BEFORE = pytest.StashKey[set[tuple[int, int]]]()
FAILED = pytest.StashKey[bool]()
ENABLED = processes.PROC.is_dir()


def pytest_configure(config: pytest.Config) -> None:
    if ENABLED:
        processes.become_subreaper()


def _watched(test: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Any]:
    @functools.wraps(test)
    async def run(*args: Any, **kwargs: Any) -> Any:
        async with watching():
            return await test(*args, **kwargs)

    return run


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        test = getattr(item, "obj", None)
        # Hypothesis wraps its own tests; pytest-asyncio reaches into that wrapper.
        if inspect.iscoroutinefunction(test) and not hasattr(test, "hypothesis"):
            item.obj = _watched(test)  # type: ignore[attr-defined]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    if ENABLED:
        item.stash[BEFORE] = {p.key for p in processes.descendants(os.getpid()).values()}
    return (yield)


def _shared(proc: processes.Proc) -> bool:
    """multiprocessing's resource tracker is one per test process by design, started by the
    first test that needs it and kept for the rest."""
    return "multiprocessing.resource_tracker" in proc.command()


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    outcome = yield
    if not ENABLED or BEFORE not in item.stash:
        return outcome
    exempt = processes.REGISTRY.lasting_pids()
    left = [p for p in processes.outliving(item.stash[BEFORE], exempt) if not _shared(p)]
    left = processes.wait_gone(left, scaled(3))
    if not left:
        return outcome
    processes.kill_all(left)
    # A test that failed stopped half-way: its processes are killed and that is all. One
    # that passed and left something running has a bug of its own.
    if not item.stash.get(FAILED, False):
        listing = "\n".join(f"  pid {p.pid}: {p.command()}" for p in left)
        pytest.fail(f"processes the test started outlived it (now killed):\n{listing}")
    return outcome


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed:
        item.stash[FAILED] = True
        deaths = processes.REGISTRY.deaths()
        if deaths:
            report.sections.append(("helper servers that died", "\n\n".join(deaths)))
    return report


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    outcome = yield
    if session.exitstatus == 0:
        processes.remove_logs()
    # An xdist worker's leftovers pass to the controller when it exits (pytest is every
    # process's subreaper), which checks after its own sessionfinish has shut the workers down.
    if not ENABLED or hasattr(session.config, "workerinput"):
        return outcome
    alive = [p for p in processes.descendants(os.getpid()).values() if not _shared(p)]
    left = processes.wait_gone(alive, scaled(5))
    if left:
        processes.kill_all(left)
        listing = "\n".join(f"  pid {p.pid}: {p.command()}" for p in left)
        print(f"\nERROR: processes of the run were still alive at its end (now killed):\n{listing}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    return outcome
