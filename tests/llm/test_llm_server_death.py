"""A model server that dies mid-request fails the test waiting on it at once, naming how it
ended and the end of its log, instead of a 300 s wait or "cannot reach the model server"
(issue 29). The tier's shared server is left alone: this test kills a server of its own."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from caucus.testing import make_hub, serve
from tests.llm.conftest import serve_model
from tests.llm.test_llm_agents import ANN, next_event, start
from tests.processes import HelperDied

pytestmark = pytest.mark.llm


async def test_a_model_server_killed_mid_request_fails_the_wait_at_once_naming_its_exit(
    tmp_path: Path,
) -> None:
    server, base = serve_model(tmp_path)
    try:
        async with make_hub(tmp_path / "hub") as hub, serve(hub) as url:
            ann = await start("ann-bot", ANN, url, base, tmp_path, "--start-with-tool", "say")
            await next_event(ann, "NewThreadRunCreated", 120)  # its first request is out
            os.kill(server.pid, signal.SIGKILL)  # not through the helper: a crash
            started = time.monotonic()
            with pytest.raises(HelperDied) as died:
                await next_event(ann, "NewThreadMessage", 300)
            waited = time.monotonic() - started
        story = str(died.value)
        assert "the model server" in story
        assert "killed by SIGKILL" in story
        assert "/v1/models" in story  # the end of its own log
        print(f"the wait ended {waited:.1f} s after the kill (its limit was 300 s)")
    finally:
        server.stop()
