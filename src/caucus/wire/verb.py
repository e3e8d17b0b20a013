"""`Verb`: one row of the hub's verb table (`wire/verbs.py`), what every door reads.

A row says all a caller and a server must agree on: the method and path, the body and query
models, the answer's model, who may call it, the errors it documents as its own, and whether
the lanes serve it too (`hot`). The FastAPI routes are registered from rows (`web/verbs.py`),
the lanes match the hot rows, and `HubClient` builds each request from its row's models; so a
verb's shape is written once, here, where both ends of the wire can read it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from caucus.domain.control import Access

R = TypeVar("R", bound=BaseModel)
_PARAM = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True, slots=True, eq=False)
class Verb(Generic[R]):
    """One verb of the HTTP API.

    `service` binds a verb by name (`"tasks.blockers"`): its route calls that method of the
    hub's service with the caller, the path parameters and the body's (or query's) fields by
    name, and answers `response.of(result)`. A verb whose service method has another shape is
    bound by a function beside its routes (`api/routes/`), which reads the same row."""

    name: str
    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str
    response: type[R] | None  # None: 204, no body
    summary: str
    access: Access
    tag: str
    errors: Mapping[int, str] = field(default_factory=dict)
    request: type[BaseModel] | None = None
    optional_body: bool = False  # the body may be left out (all its fields are optional)
    query: type[BaseModel] | None = None
    hot: bool = False  # also served by the lanes, which read the body themselves
    service: str | None = None
    status: int = 200
    exclude_none: bool = False  # absent fields are left out of the answer, not sent as null
    description: str | None = None  # more than the summary says, for /openapi.json

    @property
    def public(self) -> bool:
        """Whether a caller sends no credential (registering, the protocol, the hub's health)."""
        return self.access is Access.PUBLIC

    @property
    def path_params(self) -> tuple[str, ...]:
        return tuple(_PARAM.findall(self.path))

    def url(self, **params: str) -> str:
        """The path with its parameters filled in, each quoted whole (a `/` in an id too)."""
        return _PARAM.sub(lambda m: quote(str(params[m.group(1)]), safe=""), self.path)

    def match(self, method: str, path: str) -> dict[str, str] | None:
        """The path parameters when `method path` is this verb, else None."""
        if method != self.method:
            return None
        found = self._pattern().fullmatch(path)
        return found.groupdict() if found else None

    def _pattern(self) -> re.Pattern[str]:
        return _pattern(self.path)

    def split(self, fields: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any], Any]:
        """A caller's named fields as (path parameters, query, body) by this row's models;
        a name none of them has is a mistake of the caller's (`TypeError`)."""
        path = {k: v for k, v in fields.items() if k in self.path_params}
        query_names = self.query.model_fields if self.query is not None else {}
        body_names = self.request.model_fields if self.request is not None else {}
        unknown = set(fields) - set(path) - set(query_names) - set(body_names)
        if unknown:
            raise TypeError(f"{self.name} takes no {', '.join(sorted(unknown))}")
        query = {k: v for k, v in fields.items() if k in query_names and v is not None}
        if self.method == "GET":
            return path, query, None
        body = {k: v for k, v in fields.items() if k in body_names and v is not None}
        return path, query, body


@functools.cache
def _pattern(template: str) -> re.Pattern[str]:
    parts = _PARAM.split(template)  # literal, name, literal, name, ..., literal
    return re.compile(
        "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>[^/]+)" for i, p in enumerate(parts))
    )
