"""What each entry point loads (issue 30): the stdio bridge is a thin client that never loads
the hub (its services, storage, web framework), the native runtime or deliberation; the CLI's
front door loads no command's machinery until that command runs. Checked by module name in a
fresh interpreter, never by time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HUB_SIDE = (
    "caucus.services",
    "caucus.storage",
    "caucus.server",
    "caucus.api",
    "caucus.dashboard",
    "caucus.runtime",
    "caucus.deliberation",
    "fastapi",
    "openai",
)


def loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def offenders(modules: set[str], banned: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == b or m.startswith(b + ".") for b in banned))


@pytest.mark.parametrize(
    "module", ["caucus.mcp.bridge", "caucus.mcp.watch", "caucus.mcp.remote", "caucus.client"]
)
def test_the_bridge_and_the_watcher_load_nothing_of_the_hub(module: str) -> None:
    assert offenders(loaded_after(f"import {module}"), HUB_SIDE) == []


def test_the_command_line_loads_no_command_s_machinery_until_it_runs() -> None:
    loaded = loaded_after("import caucus.cli.main")
    banned = (
        *HUB_SIDE,
        "caucus.config",
        "caucus.client",
        "caucus.mcp",
        "mcp",
        "mcp_types",
        "httpx2",
        "uvicorn",
        "pydantic",
        "yaml",
        "asyncio",  # and with it ssl: only a command that runs a loop loads it
    )
    # The deliberation commands' modules are the command line's own (`cli/deliberate.py`,
    # `cli/briefing.py`, `cli/intents.py`): nothing of the deliberation engine loads.
    assert offenders(loaded, (*banned, "caucus.deliberation")) == []


def test_the_bridge_s_front_door_loads_only_the_standard_library() -> None:
    loaded = loaded_after("import caucus.__main__, caucus.mcp.front, caucus.mcp.listing")
    ours = {m for m in loaded if m.startswith("caucus")}
    assert ours == {
        "caucus",
        "caucus.__main__",
        "caucus.defaults",
        "caucus.mcp",
        "caucus.mcp.front",
        "caucus.mcp.listing",
    }
    heavy = ("pydantic", "mcp", "mcp_types", "httpx2", "anyio", "typer", "rich", "asyncio")
    assert offenders(loaded, heavy) == []


def test_the_hub_loads_no_model_client_until_a_chair_calls_a_model() -> None:
    # openai costs every `caucus hub` start a quarter second; only a model chair needs it.
    assert offenders(loaded_after("import caucus.server"), ("openai",)) == []


def test_the_hub_serves_before_it_loads_the_mcp_sdk() -> None:
    # The MCP SDK and the catalog are a third of a hub's start (issue 50): `/mcp` is loaded
    # by the app's lifespan once the hub serves (api/mcp/door.py), not by the import.
    loaded = loaded_after("import caucus.server, caucus.cli.hub_server")
    later = ("mcp", "mcp_types", "caucus.api.mcp.http", "caucus.api.mcp.call_lane")
    assert offenders(loaded, later) == []
