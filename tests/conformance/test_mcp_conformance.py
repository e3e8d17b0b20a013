"""The MCP conformance tier: the official suite against `/mcp` and, through
`caucus.testing.stdio_relay`, against `caucus bridge`; every scenario judged
(`mcp_suite.NOT_OFFERED`), no traceback in the hub's log or the bridge's stderr, and
docs/conformance.md's MCP section what this run found (`CAUCUS_CONFORMANCE_WRITE=1` writes
it)."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest

from caucus.testing.stdio_relay import relay
from tests.conformance import mcp_suite


async def test_the_mcp_conformance_suite_passes_what_caucus_offers(
    url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    printed = await mcp_suite.run_suite(f"{url}/mcp", tmp_path / "mcp")
    hub = mcp_suite.outcomes(tmp_path / "mcp")
    assert len(hub) >= 30, printed
    stderr = tmp_path / "bridge.stderr"
    env = {**os.environ, "CAUCUS_HUB": url, "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    with stderr.open("wb") as errors:
        command = [sys.executable, "-m", "caucus", "bridge"]
        async with relay(command, env=env, stderr=errors) as bridge_url:
            printed = await mcp_suite.run_suite(bridge_url, tmp_path / "bridge")
    bridge = mcp_suite.outcomes(tmp_path / "bridge", skip=set(mcp_suite.TRANSPORT_ONLY))
    assert len(bridge) >= 27, printed

    assert mcp_suite.misjudged(hub) == []
    assert mcp_suite.misjudged(bridge) == []
    tracebacks = [r.getMessage() for r in caplog.records if r.exc_info]
    assert tracebacks == []
    assert "Traceback" not in stderr.read_text()

    section = mcp_suite.render(mcp_suite.suite_version(), {"/mcp": hub, "caucus bridge": bridge})
    written = mcp_suite.DOC.read_text()
    if os.environ.get("CAUCUS_CONFORMANCE_WRITE") == "1":
        mcp_suite.DOC.write_text(mcp_suite.with_section(written, section))
    else:
        assert mcp_suite.with_section(written, section) == written, (
            "docs/conformance.md is not what this run found: run this test again with "
            "CAUCUS_CONFORMANCE_WRITE=1"
        )
