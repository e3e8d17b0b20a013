"""What the hub relies on of uvicorn beyond its public API (`caucus.web.uvicorn_http`: the
deadlines and the lean lane, subclasses of its httptools protocol).

An uvicorn upgrade that renames, removes or reshapes any of it fails here, by name: the
protocol's callbacks and state the subclasses override and read, and what the protocol reads
of its current cycle, which a lean request (`Exchange`) stands in for."""

from __future__ import annotations

import asyncio
import inspect
import re

import uvicorn
from uvicorn.protocols.http import httptools_impl
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.server import ServerState

from caucus.web.uvicorn_http import Exchange, LeanHttp, Patient

CALLBACKS = (
    "connection_made",
    "connection_lost",
    "on_message_begin",
    "on_url",
    "on_header",
    "on_headers_complete",
    "on_body",
    "on_message_complete",
    "on_response_complete",
)
STATE = (
    "access_log",
    "access_logger",
    "app",
    "app_state",
    "asgi_version",
    "client",
    "connections",
    "cycle",
    "expect_100_continue",
    "flow",
    "headers",
    "limit_concurrency",
    "loop",
    "parser",
    "pipeline",
    "root_path",
    "scheme",
    "scope",
    "server",
    "server_state",
    "tasks",
    "transport",
    "timeout_keep_alive",
    "timeout_keep_alive_handler",
    "_unset_keepalive_if_required",
    "_start_asgi_task",
)


async def _noop(scope: object, receive: object, send: object) -> None:
    return None


async def test_the_protocol_has_the_callbacks_and_state_the_lean_lane_uses() -> None:
    config = uvicorn.Config(_noop, http="httptools", log_config=None)
    config.load()
    protocol = HttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
    assert [n for n in CALLBACKS if not callable(getattr(protocol, n, None))] == []
    assert [n for n in STATE if not hasattr(protocol, n)] == []
    assert protocol.loop is asyncio.get_running_loop()
    # The hub's protocol is uvicorn's with these overridden, nothing renamed away.
    overridden = [n for n in CALLBACKS if n in vars(LeanHttp)]
    assert overridden, "the lean lane overrides none of the protocol's callbacks"
    for name in overridden:
        ours = inspect.signature(getattr(LeanHttp, name)).parameters
        theirs = inspect.signature(getattr(HttpToolsProtocol, name)).parameters
        assert list(ours) == list(theirs), name


def test_an_exchange_has_everything_the_protocol_reads_of_its_cycle() -> None:
    source = inspect.getsource(httptools_impl.HttpToolsProtocol)
    read = set(re.findall(r"self\.cycle\.(\w+)", source))
    assert read  # the protocol still keeps a current cycle
    assert read - set(Exchange.__slots__) == set()


def test_the_status_lines_the_lean_lane_writes_are_uvicorn_s() -> None:
    assert STATUS_LINE[200].startswith(b"HTTP/1.1 200")
    assert STATUS_LINE[413].startswith(b"HTTP/1.1 413")


def test_the_protocol_ends_a_response_as_the_hub_s_override_does() -> None:
    """`Patient.on_response_complete` is uvicorn's with the keep-alive timer kept on the
    loop's one clock (`web/deadlines.py`): an uvicorn that does anything more there, or arms
    that timer anywhere else, fails here."""
    theirs = inspect.getsource(HttpToolsProtocol.on_response_complete)
    ours = inspect.getsource(Patient.on_response_complete)
    used = set(re.findall(r"self\.(\w+)", theirs)) - set(re.findall(r"self\.(\w+)", ours))
    assert used == {"timeout_keep_alive_task", "loop", "timeout_keep_alive_handler"}
    source = inspect.getsource(HttpToolsProtocol)
    assert len(re.findall(r"self\.timeout_keep_alive_task = self\.loop\.call_later", source)) == 1
