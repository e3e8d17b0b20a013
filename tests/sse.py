"""A small Server-Sent Events reader for tests (what a browser's EventSource does)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2


@dataclass
class Event:
    type: str
    data: Any
    id: str | None


async def read_events(response: httpx2.Response) -> AsyncIterator[Event]:
    fields: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line == "":
            if "data" in fields:
                yield Event(
                    fields.get("event", "message"), json.loads(fields["data"]), fields.get("id")
                )
            fields = {}
            continue
        if line.startswith(":"):
            continue  # a keep-alive comment
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value
