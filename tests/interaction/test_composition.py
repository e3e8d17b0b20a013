"""One composition root: `caucus.server.build_app` is the only way to serve the hub, and the
Host/Origin guard answers on every route of what it builds."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re
import typing
from pathlib import Path

import httpx2
from fastapi import FastAPI
from starlette.types import ASGIApp

import caucus
from caucus.api.hotpath import FastLane
from caucus.api.mcp.http import McpEndpoint
from caucus.api.routes import meta, peers
from caucus.server import build_app, open_hub
from caucus.testing import hub_settings, make_hub
from tests.routes import api_operations


def public_functions() -> list[tuple[str, typing.Callable[..., object]]]:
    found = []
    for info in pkgutil.walk_packages(caucus.__path__, "caucus."):
        if info.name.endswith("__main__"):
            continue  # importing it runs the command line
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(value):
                found.append((f"{module.__name__}.{name}", value))
    return found


def test_the_only_public_function_that_returns_an_app_is_build_app() -> None:
    servable = set()
    for name, function in public_functions():
        returns = str(inspect.signature(function).return_annotation)
        if re.search(r"\b(FastAPI|Starlette|ASGIApp|CaucusApp)\b", returns):
            servable.add(name)
    assert servable == {"caucus.server.build_app"}
    assert importlib.util.find_spec("caucus.api.app") is None  # create_app() and asgi() are gone


async def refusals(app: ASGIApp, paths: list[tuple[str, str]]) -> list[int]:
    transport = httpx2.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        return [(await http.request(m, p, content=b"{}")).status_code for m, p in paths]


async def test_pieces_assembled_any_other_way_serve_nothing(tmp_path: Path) -> None:
    async with make_hub(tmp_path) as hub:
        registered = await hub.principals.register(name="alice")
        rogue = FastAPI()
        rogue.include_router(peers.router)
        rogue.include_router(meta.router)
        rogue.state.hub = hub  # what a bypass would try
        paths = [("GET", "/health"), ("GET", "/peers"), ("GET", "/limits")]
        assert await refusals(rogue, paths) == [500, 500, 500]
        lane = FastLane(rogue, max_body_bytes=65536)  # the hot routes, without the guard
        hot = [("POST", "/send"), ("GET", "/receive?timeout=0")]
        assert await refusals(lane, hot) == [500, 500]
        assert await refusals(McpEndpoint(hub), [("POST", "/mcp")]) == [500]
        assert (await hub.delivery.peek(registered.peer)).pending == 0  # nothing got through


async def test_the_guard_answers_on_every_route_of_the_built_app(tmp_path: Path) -> None:
    hub = open_hub(hub_settings(tmp_path))
    app = build_app(hub)
    routes = set(api_operations(app)) | {("POST", "/mcp"), ("GET", "/mcp"), ("DELETE", "/mcp")}
    assert {("POST", "/send"), ("GET", "/receive"), ("GET", "/operator/events")} <= routes
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        for method, path in sorted(routes):
            concrete = re.sub(r"\{[^}]+\}", "x", path)
            for headers, expected in (
                ({"Host": "evil.example"}, 421),
                ({"Origin": "http://evil.example"}, 403),
            ):
                response = await http.request(method, concrete, headers=headers, content=b"{}")
                assert response.status_code == expected, (method, path, headers)
                assert response.json()["error"] in ("misdirected_request", "forbidden")
                assert response.headers["x-content-type-options"] == "nosniff"
