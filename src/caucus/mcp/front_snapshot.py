"""The bridge's fast front's answers, recorded from the MCP SDK serving the real bridge.

`python -m caucus.mcp.front_snapshot` writes `mcp/front.json`: for each handshake protocol
version, what the SDK answers to `initialize`; for each sessionless version, what it answers to
`server/discover`, `prompts/list`, `resources/list` and `tools/list` (that one without its
tools); and the tool catalog's listing template (`mcp/listing.py`), each with and without
Claude Code channel push; the prompts, the resources a bridge lists before `join` (none), and
the default limits a listing is filled with when the hub does not say its own. `--check`
exits 1 if the file is not what the code now makes (a test runs it: change a tool, a prompt
or the SDK, and the test says to run this).

Every answer is taken from the SDK itself, over memory streams, as `stdio_server` writes it:
nothing here restates the protocol.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from caucus import __version__
from caucus.config import Settings
from caucus.mcp.bridge import Bridge
from caucus.mcp.front import CLIENT_KEY, VERSION_KEY
from caucus.mcp.push import CHANNEL_CAPABILITY
from caucus.wire.room import Limits

PATH = Path(__file__).with_name("front.json")
# A hub nobody listens on: the bridge never reaches it while the snapshot is made.
NOWHERE = "http://127.0.0.1:9"


async def _answers(bridge: Bridge, channel: bool, requests: list[dict[str, Any]]) -> list[Any]:
    """The SDK's answer to each request, in order, as JSON values."""
    server = bridge.tools().server
    options = server.create_initialization_options(
        experimental_capabilities={CHANNEL_CAPABILITY: {}} if channel else None,
    )
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](16)
    answers: list[Any] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_in, server_out, options)
        for request in requests:
            message = types.jsonrpc_message_adapter.validate_python(request, by_name=False)
            await to_server.send(SessionMessage(message))
            if "id" not in request:
                continue
            reply = await from_server.receive()
            answers.append(reply.message.model_dump(by_alias=True, exclude_unset=True, mode="json"))
        await to_server.aclose()
        tg.cancel_scope.cancel()
    return answers


def _initialize(version: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "caucus-front-snapshot", "version": __version__},
        },
    }


def _sessionless(number: int, method: str, version: str) -> dict[str, Any]:
    meta = {
        VERSION_KEY: version,
        CLIENT_KEY: {"name": "caucus-front-snapshot", "version": __version__},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": {"_meta": meta}}


SESSIONLESS = ("server/discover", "prompts/list", "resources/list", "tools/list")


async def _snapshot() -> dict[str, Any]:
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    initialize: dict[str, dict[str, Any]] = {}
    sessionless: dict[str, dict[str, Any]] = {}
    templates: dict[str, list[dict[str, Any]]] = {}
    lists: dict[str, Any] = {}
    for channel in (False, True):
        flavour = "channel" if channel else "plain"  # channel push adds confirm_delivery
        bridge = Bridge(NOWHERE, channel=channel)
        try:
            for version in HANDSHAKE_PROTOCOL_VERSIONS:
                asked = [
                    _initialize(version),
                    initialized,
                    {"jsonrpc": "2.0", "id": 2, "method": "prompts/list", "params": {}},
                    {"jsonrpc": "2.0", "id": 3, "method": "resources/list", "params": {}},
                ]
                answers = await _answers(bridge, channel, asked)
                initialize.setdefault(version, {})["channel" if channel else "plain"] = answers[0][
                    "result"
                ]
                lists = {
                    "prompts/list": answers[1]["result"],
                    "resources/list": answers[2]["result"],
                }
            for version in MODERN_PROTOCOL_VERSIONS:
                asked = [_sessionless(n, m, version) for n, m in enumerate(SESSIONLESS)]
                results = [a["result"] for a in await _answers(bridge, channel, asked)]
                del results[-1]["tools"]  # the front fills them in, as for the handshake era
                answered = dict(zip(SESSIONLESS, results, strict=True))
                sessionless.setdefault(version, {})[flavour] = answered
            templates[flavour] = bridge.tools().template()
        finally:
            bridge.identities.close()
            await bridge.client.aclose()
    return {
        "caucus": __version__,
        "initialize": initialize,
        "lists": lists,
        "sessionless": sessionless,
        "tools": templates,
        # As a bridge fills them when the hub does not answer: the settings' defaults.
        "limits": Limits.of(Settings.model_construct()).model_dump(mode="json"),
    }


def snapshot() -> dict[str, Any]:
    return anyio.run(_snapshot)


def text(found: dict[str, Any]) -> str:
    return json.dumps(found, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    made = text(snapshot())
    if argv == ["--check"]:
        if PATH.exists() and PATH.read_text("utf-8") == made:
            return 0
        print(
            f"{PATH} is not what the catalog, the prompts and the SDK make now: run "
            "`python -m caucus.mcp.front_snapshot` and commit the file",
            file=sys.stderr,
        )
        return 1
    PATH.write_text(made, "utf-8")
    print(f"wrote {PATH} ({len(made)} characters)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
