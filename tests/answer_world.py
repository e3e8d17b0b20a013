"""A small room for the answers walker: agents, the operator and the observer on a served hub,
and makers of what a case needs fresh (a task in a given state, an offer, a form, a launched
agent, a deliberation), each made through the API as a user would."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import httpx2

from caucus.services.hub import Hub
from tests.waiting import eventually

OBSERVER_TOKEN = "cauob_answers-walker-observer-0123456789"
PROFILES = {"echo": {"backend": "mock", "description": "echoes what it is told"}}


@dataclass
class World:
    http: httpx2.AsyncClient
    hub: Hub
    tokens: dict[str, str] = field(default_factory=dict)
    _n: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def fresh(self, stem: str) -> str:
        return f"{stem}-{next(self._n)}"

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"} if role in self.tokens else {}

    async def call(
        self,
        role: str,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx2.Response:
        return await self.http.request(
            method,
            path,
            json=body,
            params=params,
            headers={**self.headers(role), **(headers or {})},
        )

    async def ok(self, role: str, method: str, path: str, **kw: Any) -> Any:
        response = await self.call(role, method, path, **kw)
        assert response.status_code < 300, (method, path, response.status_code, response.text)
        return response.json() if response.content else None

    # --- the room ------------------------------------------------------------------------------
    async def open(self) -> None:
        for name in ("alice", "bob", "carol"):
            registered = await self.ok("none", "POST", "/register", body={"name": name})
            self.tokens[name] = registered["token"]
        self.tokens["operator"] = self.hub.operator.token
        self.tokens["observer"] = OBSERVER_TOKEN
        await self.ok("alice", "POST", "/channels/join", body={"channel": "#dev"})
        await self.ok("bob", "POST", "/channels/join", body={"channel": "#dev"})
        await self.ok("alice", "POST", "/send", body={"to": "bob", "content": "hello bob"})
        key = await self.ok("alice", "POST", "/watch/keys")
        self.tokens["watcher"] = key["key"]

    async def agent(self) -> str:
        """A new agent of its own; its name (its token is kept under it)."""
        name = self.fresh("agent")
        registered = await self.ok("none", "POST", "/register", body={"name": name})
        self.tokens[name] = registered["token"]
        return name

    # --- work ---------------------------------------------------------------------------------
    async def task(self, state: str = "pending", to: str = "bob") -> str:
        """A task from alice to `to`, moved into `state`."""
        made = await self.ok("alice", "POST", "/tasks", body={"to": to, "content": "do it"})
        task_id = made["task_id"]
        if state == "pending":
            return task_id
        await self.ok(to, "GET", "/receive", params={"timeout": 0, "limit": 500})
        path = f"/tasks/{task_id}"
        if state == "input_required":
            await self.ok(to, "POST", f"{path}/input", body={"question": "which?"})
        elif state == "completed":
            await self.ok(to, "POST", f"{path}/reply", body={"result": "done"})
        return task_id

    async def offer(self, by: str = "alice") -> str:
        made = await self.ok(by, "POST", "/offers", body={"content": "a job"})
        return str(made["offer_id"])

    async def claimed_offer(self) -> str:
        offer_id = await self.offer()
        await self.ok("bob", "POST", f"/offers/{offer_id}/claim", body={})
        return offer_id

    async def form(self, by: str = "alice") -> str:
        fields = [{"key": "go", "type": "radio", "options": ["yes", "no"]}]
        made = await self.ok(by, "POST", "/forms", body={"title": "ok?", "fields": fields})
        return str(made["form_id"])

    async def answered_form(self) -> str:
        form_id = await self.form()
        answers = {"answers": {"go": "yes"}}
        await self.ok("operator", "POST", f"/operator/forms/{form_id}/answer", body=answers)
        return form_id

    async def deliberation(self) -> str:
        """A deliberation whose first request has reached bob."""
        body = {"subject": "Adopt it?", "panel": ["bob", "carol"], "deadline": 3600}
        made = await self.ok("alice", "POST", "/deliberations", body=body)
        deliberation_id = str(made["deliberation_id"])

        async def asked() -> bool:
            listed = await self.ok("bob", "GET", "/tasks", params={"role": "received"})
            return any(t["thread"] == deliberation_id for t in listed["tasks"])

        await eventually(asked, what="bob's position request")
        return deliberation_id

    async def launched(self) -> str:
        name = self.fresh("launched")
        made = await self.ok(
            "operator", "POST", "/operator/agents", body={"name": name, "backend": "mock"}
        )
        return str(made["launch_id"])

    async def grant(self, to: str = "alice") -> None:
        await self.ok("operator", "PUT", f"/operator/peers/{to}/spawn-grant", body={"teammates": 4})

    async def spawned(self) -> str:
        await self.grant()
        body = {"prompt": "You echo.", "profile": "echo", "name": self.fresh("mate")}
        made = await self.ok("alice", "POST", "/teammates", body=body)
        return str(made["spawn_id"])

    async def reservation(self, by: str = "alice", path: str = "src/app.py") -> str:
        made = await self.ok(by, "POST", "/reservations", body={"paths": [path], "ttl": 600})
        return str(made["reservations"][0]["reservation_id"])
