"""Every route the app serves is documented in /openapi.json, with its errors."""

from __future__ import annotations

from pathlib import Path

import httpx2
from fastapi.routing import APIRoute

from caucus.server import CaucusApp, build_app, open_hub
from caucus.testing import hub_settings
from tests.routes import SELF_DOCUMENTING, served_routes


def app_for(tmp_path: Path) -> CaucusApp:
    return build_app(open_hub(hub_settings(tmp_path)))


def test_every_route_is_in_the_openapi_document(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    spec = app.openapi()
    served: set[tuple[str, str]] = set()
    for path, methods, _ in served_routes(app):
        assert path, "a route without a path"
        if path in SELF_DOCUMENTING:
            continue
        for method in methods:
            if method != "HEAD":
                served.add((path, method.lower()))
    documented = {(path, m) for path, ops in spec["paths"].items() for m in ops}
    undocumented = served - documented
    assert not undocumented, f"routes missing from /openapi.json: {sorted(undocumented)}"
    assert served, "no routes found"
    for path, method in served:
        route_doc = spec["paths"][path][method]
        assert route_doc.get("summary"), f"{method.upper()} {path} has no summary"


def test_authenticated_routes_document_401_and_hot_routes_their_bodies(tmp_path: Path) -> None:
    spec = app_for(tmp_path).openapi()
    for path in (
        "/send",
        "/receive",
        "/peek",
        "/ack",
        "/peers",
        "/ping",
        "/status",
        "/leave",
        "/channels",
        "/channels/join",
        "/channels/leave",
        "/channels/topic",
    ):
        ops = spec["paths"][path]
        for op in ops.values():
            assert "401" in op["responses"], path
    send_body = spec["paths"]["/send"]["post"]["requestBody"]["content"]["application/json"]
    assert set(send_body["schema"]["required"]) == {"to", "content"}
    params = {p["name"] for p in spec["paths"]["/receive"]["get"]["parameters"]}
    assert params == {"timeout", "ack", "limit"}


def test_every_api_route_is_a_fastapi_route(tmp_path: Path) -> None:
    # A raw Starlette route would bypass the OpenAPI document and the error mapping.
    app = app_for(tmp_path)
    for path, _, original in served_routes(app):
        if path not in SELF_DOCUMENTING:
            assert isinstance(original, APIRoute), path


async def test_openapi_json_is_served(url: str) -> None:
    async with httpx2.AsyncClient(base_url=url) as http:
        response = await http.get("/openapi.json")
    assert response.status_code == 200
    assert "/send" in response.json()["paths"]


def test_the_api_reference_covers_every_route(tmp_path: Path) -> None:
    reference = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    spec = app_for(tmp_path).openapi()
    for path, ops in spec["paths"].items():
        for method in ops:
            assert f"{method.upper()} {path}" in reference, f"docs/api.md lacks {method} {path}"
