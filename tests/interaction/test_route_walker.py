"""Every route in /openapi.json and every MCP tool, against every class of bad input: each is
refused with a 4xx and a stable code (never a 5xx; a 422 names its `field`), and afterwards
every shared read still answers. A route added later is walked without anyone listing it here."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from caucus.client import HubClient
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.interaction.test_mcp_http import INIT, JSON_RPC, rpc

MB_STRING = "x" * 1_048_576
DEEP = "[" * 100 + "]" * 100
# Raw JSON values, as the bytes a client could send: what json.dumps could never produce too.
BAD_VALUES: dict[str, str] = {
    "lone surrogate": '"\\ud800"',
    "low surrogate": '"a\\udfffb"',
    "oversized int": str(2**70),
    "huge int": "9" * 5000,
    "negative": "-1",
    "float for int": "1.5",
    "huge float": "1e999",
    "wrong type (list)": "[[1]]",
    "wrong type (object)": '{"x": {"y": 1}}',
    "deep nesting": DEEP,
    "1 MB string": json.dumps(MB_STRING),
}
WHOLE_BODIES: dict[str, tuple[bytes, str]] = {
    "malformed JSON": (b'{"to": ', "application/json"),
    "wrong content type": (b'{"name": "x"}', "text/plain"),
    "form encoded": (b"name=x&to=y", "application/x-www-form-urlencoded"),
    "non-UTF-8": (b'{"name": "\xff\xfe"}', "application/json"),
    "duplicate keys": (b'{"name": "a", "name": "b"}', "application/json"),
    "NaN": (b'{"capacity": NaN}', "application/json"),
    "a bare surrogate": (b'"\\ud800"', "application/json"),
    "deep": (DEEP.encode(), "application/json"),
}
QUERY_VALUES = [
    "%ED%A0%80",  # a surrogate, UTF-8 encoded: not UTF-8 at all
    "%FF%FE",
    "%00",
    str(2**70),
    "9" * 400,
    "-1",
    "1.5",
    "abc",
    "nan",
    "inf",
    "-inf",
    "1e18",
    "",
    "x" * 4000,
]
PATH_VALUES = ["%ED%A0%80", "%FF", "%00", "%2E%2E", "9" * 40, "-1", "x" * 2000, "a%2Fb"]


@pytest.fixture
async def walked(tmp_path: Path) -> AsyncIterator[tuple[str, Hub]]:
    """A served hub whose long-polls are short: a bad value that happens to be a valid wait
    must not hold the walk for 25 s."""
    async with make_hub(tmp_path, receive_timeout_max=0.2) as hub, serve(hub) as url:
        yield url, hub


def _schema(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = spec["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _body_fields(spec: dict[str, Any], op: dict[str, Any]) -> list[str]:
    body = op.get("requestBody", {}).get("content", {}).get("application/json")
    if not body:
        return []
    return list(_schema(spec, body["schema"]).get("properties", {}))


def _fill(path: str, ids: dict[str, str]) -> str:
    for key, value in ids.items():
        path = path.replace("{" + key + "}", value)
    return path


class Walker:
    def __init__(self, http: httpx2.AsyncClient, tokens: dict[str, str]) -> None:
        self.http = http
        self.tokens = tokens
        self.seen = 0
        self.failures: list[str] = []

    async def request(
        self, what: str, method: str, path: str, access: str, body: bytes | None, ctype: str
    ) -> None:
        token = self.tokens["operator" if access in ("viewer", "operator") else "agent"]
        if path == "/leave":  # a well-formed body it ignores must not end the walk's agent
            registered = await self.http.post("/register", json={"name": f"leaver-{self.seen}"})
            token = registered.json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        if body is not None:
            headers["Content-Type"] = ctype
        self.seen += 1
        if path.startswith("/operator/events"):  # a stream: its status is the answer
            async with self.http.stream(method, path, headers=headers) as response:
                status = response.status_code
                raw = await response.aread() if status >= 400 else b""
        else:
            response = await self.http.request(method, path, content=body, headers=headers)
            status, raw = response.status_code, response.content
        where = f"{what}: {method} {path[:80]}"
        if status >= 500:
            self.failures.append(f"{where} -> {status} {raw[:200]!r}")
            return
        if status >= 400:
            try:
                error = json.loads(raw)
            except ValueError:
                self.failures.append(f"{where} -> {status} without a JSON error: {raw[:120]!r}")
                return
            if not (isinstance(error.get("error"), str) and error.get("detail")):
                self.failures.append(f"{where} -> {status} without a code: {error}")
            elif status == 422 and not isinstance(error.get("field"), str):
                # docs/api.md: an invalid_request names the field that is wrong.
                self.failures.append(f"{where} -> 422 without a field: {error}")
        elif raw and response.headers.get("content-type", "").startswith("application/json"):
            json.loads(raw)  # a success still parses


async def _setup(url: str, hub: Hub) -> tuple[dict[str, str], dict[str, str], HubClient]:
    alice, bob = HubClient(url), HubClient(url)
    await alice.register("alice")
    await bob.register("bob")
    await alice.join_channel("#dev")
    task = await alice.send_task("bob", "do it")
    offer = await alice.post_offer("a job")
    form = await alice.ask_operator("ok?", [{"key": "go", "type": "radio", "options": ["y"]}])
    await bob.aclose()
    ids = {
        "task_id": task.task_id,
        "offer_id": offer.offer_id,
        "form_id": form.form_id,
        "name": "bob",
        "scope": "dev",
        "channel": "dev",
        "asset": "app.js",
    }
    assert alice.token is not None
    return {"agent": alice.token, "operator": hub.operator.token}, ids, alice


async def test_every_route_refuses_every_bad_input_class_with_a_code(
    walked: tuple[str, Hub],
) -> None:
    url, hub = walked
    tokens, ids, alice = await _setup(url, hub)
    async with httpx2.AsyncClient(base_url=url, timeout=30) as http:
        spec = (await http.get("/openapi.json")).json()
        walker = Walker(http, tokens)
        operations = [
            (path, method.upper(), op)
            for path, ops in spec["paths"].items()
            for method, op in ops.items()
        ]
        assert len(operations) > 60
        for path, method, op in operations:
            access = op.get("x-caucus-access", "public")
            target = _fill(path, ids)
            if method != "GET":
                for field in _body_fields(spec, op) or ["name"]:
                    for what, value in BAD_VALUES.items():
                        raw = f'{{"{field}": {value}}}'.encode()
                        await walker.request(
                            f"{field}={what}", method, target, access, raw, "application/json"
                        )
                for what, (raw, ctype) in WHOLE_BODIES.items():
                    await walker.request(what, method, target, access, raw, ctype)
            for param in op.get("parameters", []):
                for value in QUERY_VALUES:
                    if param["in"] == "query":
                        mutated = f"{target}?{param['name']}={value}"
                    elif param["in"] == "path":
                        continue
                    else:  # headers: only what a header can carry
                        continue
                    await walker.request(param["name"], method, mutated, access, None, "")
                if param["in"] == "path":
                    for value in PATH_VALUES:
                        mutated = _fill(path, {**ids, param["name"]: value})
                        await walker.request(param["name"], method, mutated, access, None, "")
        assert walker.seen > 1400
        assert not walker.failures, "\n".join(walker.failures[:40])
        await _shared_reads_answer(http, tokens)
    await alice.aclose()


async def _shared_reads_answer(http: httpx2.AsyncClient, tokens: dict[str, str]) -> None:
    agent = {"Authorization": f"Bearer {tokens['agent']}"}
    op = {"Authorization": f"Bearer {tokens['operator']}"}
    for path, headers in [
        ("/peers", agent),
        ("/channels", agent),
        ("/floors", agent),
        ("/forms", agent),
        ("/offers", agent),
        ("/tasks", agent),
        ("/decisions", agent),
        ("/operator/snapshot", op),
        ("/operator/messages", op),
        ("/operator/tasks", op),
        ("/operator/offers", op),
        ("/operator/forms?state=all", op),
        ("/operator/ledger", op),
        ("/export", op),
        ("/export?format=markdown", op),
        ("/export?format=text", op),
    ]:
        response = await http.get(path, headers=headers)
        assert response.status_code == 200, (path, response.text[:200])
        if path.startswith("/export?format="):
            assert response.text
        else:
            response.json()


async def test_every_mcp_tool_refuses_every_bad_argument_class(walked: tuple[str, Hub]) -> None:
    url, hub = walked
    tokens, _, alice = await _setup(url, hub)
    failures: list[str] = []
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC, timeout=30) as http:
        opened = await http.post("/mcp", json=rpc(1, "initialize", INIT))
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post("/mcp", json=notified, headers=session)
        joined = await http.post(
            "/mcp",
            json=rpc(2, "tools/call", {"name": "join", "arguments": {"name": "mallory"}}),
            headers=session,
        )
        assert joined.status_code == 200
        listed = await http.post("/mcp", json=rpc(3, "tools/list", {}), headers=session)
        tools = _rpc_result(listed.text)["tools"]
        assert len(tools) >= 15
        number = 10
        for tool in tools:
            fields = list(tool["inputSchema"].get("properties", {})) or ["x"]
            for field in fields:
                for what, value in BAD_VALUES.items():
                    if tool["name"] == "leave" and what != "lone surrogate":
                        continue  # a bad value that is a valid one must not end the session
                    number += 1
                    raw = (
                        f'{{"jsonrpc": "2.0", "id": {number}, "method": "tools/call", "params":'
                        f' {{"name": "{tool["name"]}", "arguments": {{"{field}": {value}}}}}}}'
                    )
                    response = await http.post(
                        "/mcp",
                        content=raw.encode(),
                        headers={**session, "Content-Type": "application/json"},
                    )
                    where = f"{tool['name']}.{field}={what}"
                    if response.status_code >= 500:
                        failures.append(f"{where} -> HTTP {response.status_code}")
                    elif response.status_code == 200 and "internal_error" in response.text:
                        failures.append(f"{where} -> {response.text[:200]}")
        assert not failures, "\n".join(failures[:40])
        await _shared_reads_answer(http, tokens)
    await alice.aclose()


def _rpc_result(text: str) -> dict[str, Any]:
    for line in text.splitlines():
        if line.startswith("data:"):
            return dict(json.loads(line[5:])["result"])
    return dict(json.loads(text)["result"])


@pytest.mark.sqlite_file
async def test_values_an_older_hub_stored_never_break_a_read(url: str, live_hub: Hub) -> None:
    tokens, _, alice = await _setup(url, live_hub)
    await alice.send("bob", "hello", meta={"k": "v"})
    path = live_hub.settings.db_path()
    # What an older hub wrote when a client sent "\ud800": escaped JSON in the JSON columns.
    with sqlite3.connect(path) as conn:
        conn.execute('UPDATE peers SET skills = \'[{"id": "\\ud800", "name": "x"}]\'')
        conn.execute('UPDATE messages SET meta = \'{"k": "\\udfff"}\' WHERE meta IS NOT NULL')
        conn.execute('UPDATE offers SET required_skills = \'[{"id": "\\ud800"}]\'')
    async with httpx2.AsyncClient(base_url=url, timeout=30) as http:
        await _shared_reads_answer(http, tokens)
        peers = await http.get("/peers", headers={"Authorization": f"Bearer {tokens['agent']}"})
        assert "\ufffd" in peers.text
    await alice.aclose()
