"""The verb table (`caucus.wire.verbs`) is what the hub serves, and what `HubClient` sends.

Each row is held to the app's own OpenAPI document: the route exists at its method and path,
with its summary, access, documented errors, answer, body and query; and every agent route the
app serves is a row. A row the routes disagree with fails here, whichever side drifted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute

from caucus.server import CaucusApp, build_app, open_hub
from caucus.testing import hub_settings
from caucus.wire.verbs import VERBS, Verb, hot_verb
from tests.routes import served_routes

# What the table leaves out, by design (`caucus.wire.verbs`' docstring says why).
NOT_VERBS = ("/operator/events", "/console", "/a2a", "/.well-known", "/export", "/messages/export")
SELF = {"/openapi.json", "/"}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> CaucusApp:
    tmp: Path = tmp_path_factory.mktemp("verbs")
    return build_app(open_hub(hub_settings(tmp)))


@pytest.fixture(scope="module")
def spec(app: CaucusApp) -> dict[str, Any]:
    return app.openapi()


@pytest.fixture(scope="module")
def routes(app: CaucusApp) -> dict[tuple[str, str], APIRoute]:
    found: dict[tuple[str, str], APIRoute] = {}
    for path, methods, route in served_routes(app):
        if isinstance(route, APIRoute):
            found |= {(m, path): route for m in methods}
    return found


def _ref(schema: dict[str, Any]) -> str:
    return str(schema.get("$ref", "")).rsplit("/", 1)[-1]


def test_every_agent_route_is_a_row_and_every_row_a_route(spec: dict[str, Any]) -> None:
    served = {
        (method.upper(), path)
        for path, ops in spec["paths"].items()
        if path not in SELF and not path.startswith(NOT_VERBS)
        for method in ops
    }
    rows = {(v.method, v.path) for v in VERBS.values()}
    assert served - rows == set(), "routes without a row in caucus.wire.verbs"
    assert rows - served == set(), "rows the hub does not serve"


@pytest.mark.parametrize("verb", list(VERBS.values()), ids=list(VERBS))
def test_the_route_is_what_its_row_says(
    spec: dict[str, Any], routes: dict[tuple[str, str], APIRoute], verb: Verb[Any]
) -> None:
    route = routes[verb.method, verb.path]
    op = spec["paths"][verb.path][verb.method.lower()]
    assert route.summary == verb.summary
    assert (route.openapi_extra or {})["x-caucus-access"] == verb.access.value
    assert route.tags == [verb.tag]
    assert route.status_code in (None, verb.status)
    own = {int(k): v["description"] for k, v in route.responses.items() if int(k) >= 400}
    assert own == dict(verb.errors)
    if verb.response is None:
        assert "content" not in op["responses"][str(verb.status)]
    else:
        ok = op["responses"][str(verb.status)]["content"]["application/json"]["schema"]
        assert _ref(ok) == verb.response.__name__
    body = op.get("requestBody")
    if verb.request is None:
        assert body is None
    else:
        assert body is not None
        assert body.get("required", False) is not verb.optional_body
        schema = body["content"]["application/json"]["schema"]
        named = {_ref(schema), schema.get("title")} | {_ref(s) for s in schema.get("anyOf", [])}
        assert verb.request.__name__ in named
    params = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
    wanted = set(verb.query.model_fields) if verb.query is not None else set()
    assert params == wanted


def test_the_lanes_match_the_hot_rows_and_nothing_else() -> None:
    hot = hot_verb("POST", "/tasks/t-1/reply")
    assert hot is not None
    assert (hot[0].name, hot[1]) == ("reply_task", {"task_id": "t-1"})
    assert hot_verb("POST", "/send") == (VERBS["send"], {})
    assert hot_verb("GET", "/receive") == (VERBS["receive"], {})
    assert hot_verb("POST", "/tasks/t-1/blocked_by") is None  # a row, but not a hot one
    assert hot_verb("POST", "/tasks/a/b/reply") is None
    assert hot_verb("GET", "/send") is None


def test_a_row_builds_its_urls_and_splits_a_callers_fields() -> None:
    depend = VERBS["depend"]
    assert depend.url(task_id="a/b c") == "/tasks/a%2Fb%20c/blocked_by"
    assert depend.split({"task_id": "t", "blocked_by": ["u"]}) == (
        {"task_id": "t"},
        {},
        {"blocked_by": ["u"]},
    )
    with pytest.raises(TypeError, match="depend takes no blockers"):
        depend.split({"task_id": "t", "blockers": []})
    assert VERBS["ready_tasks"].split({"limit": 5}) == ({}, {"limit": 5}, None)
