from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from tests.acceptance.test_agent_cli import AgentProcess


@pytest.fixture(autouse=True)
async def _no_agent_left_running() -> AsyncIterator[None]:
    """An agent process a failed test did not end is killed, not left to the next test."""
    yield
    while AgentProcess.started:
        agent = AgentProcess.started.pop()
        if agent.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                agent.proc.kill()
            await agent.proc.wait()
