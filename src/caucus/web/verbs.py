"""The HTTP routes of the verb table (`caucus.wire.verbs`): one factory registers each row.

`serve(router, verb, glue)` registers a row: its method and path, summary, tag, access, the
errors it documents, its answer, and a handler that takes its principal (by the row's access),
its path parameters and its body or query as the row's models, then calls `glue` with them.
A row naming a `service` needs no glue: `by_name` calls that service method with the caller,
the path parameters and the body's (or query's) fields by name. The hot rows' handlers read
their own bodies (the lanes share them), so they take `route_args(verb)` instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel, ValidationError
from starlette.responses import Response

from caucus.domain.control import Access
from caucus.errors import invalid_input
from caucus.services.hub import Hub
from caucus.web.access import OperatorDep, PeerDep, RoomDep, ViewerDep, WatcherDep, access
from caucus.web.body import parse_model
from caucus.web.context import hub_of, socket_url
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import body_schema
from caucus.wire.verb import Verb
from caucus.wire.verbs import VERBS

W = TypeVar("W")
B = TypeVar("B")

_PRINCIPAL: dict[Access, Any] = {
    Access.AGENT: PeerDep,
    Access.ROOM: RoomDep,
    Access.OPERATOR: OperatorDep,
    Access.VIEWER: ViewerDep,
    Access.WATCHER: WatcherDep,
}


@dataclass(frozen=True, slots=True)
class Call(Generic[W, B]):
    """One call of a verb, as its glue receives it, from any door: the caller as its access
    names it (a `Peer` for an agent, a `Principal` for the room, a `Role` for the operator),
    and `rq`, the body (or, for a GET, the query) as the row's model. Over HTTP `request` is
    there; an in-process door (`/mcp`'s port) says how it is reached instead."""

    hub: Hub
    who: W
    rq: B
    path: dict[str, str]
    request: Request | None = None
    hub_url: str = "http://127.0.0.1"
    agent_url: str | None = None

    def url(self) -> str:
        """The hub as this caller reaches it."""
        if self.request is not None:
            return str(self.request.base_url).rstrip("/")
        return self.hub_url

    def url_for_agents(self) -> str:
        """The hub as an agent it starts reaches it (the socket the request came in on)."""
        if self.request is not None:
            return socket_url(self.request.scope, str(self.request.base_url))
        return self.agent_url or self.hub_url


Glue = Callable[[Call[Any, Any]], Awaitable[BaseModel | None]]  # None: a 204's
_GLUE: dict[str, Glue] = {}


def bind(verb: Verb[Any], glue: Glue) -> Glue:
    """`glue` answers `verb` from every door (a hot row's route reads its body itself)."""
    _GLUE[verb.name] = glue
    return glue


def glue_of(verb: Verb[Any]) -> Glue:
    """What answers `verb`: the glue bound to it, or its service by name."""
    found = _GLUE.get(verb.name)
    return found if found is not None else by_name(verb)


def model_of(verb: Verb[Any], fields: dict[str, Any]) -> tuple[dict[str, str], Any]:
    """A caller's named fields (an in-process door's) as (path parameters, the row's body or
    query model), validated as the HTTP routes validate them (`InvalidRequest`, by field)."""
    path, query, body = verb.split(fields)
    model, given = (verb.request, body) if verb.request is not None else (verb.query, query)
    if model is None:
        return path, None
    try:
        return path, model.model_validate(given)
    except ValidationError as exc:
        raise invalid_input(list(exc.errors())) from None


async def answer_raw(
    hub: Hub, token: str | None, verb: Verb[Any], path: dict[str, str], raw: bytes
) -> bytes:
    """A hot agent verb answered from its raw body (both lanes and its FastAPI route)."""
    peer = await hub.principals.agent(token)
    rq = parse_model(verb.request, raw) if verb.request is not None else None
    done = await glue_of(verb)(Call(hub, peer, rq, path))
    assert done is not None  # every hot verb answers a body
    return type(done).__pydantic_serializer__.to_json(done)


def route_args(verb: Verb[Any]) -> dict[str, Any]:
    """What `APIRouter.add_api_route` (or `api_route`) takes for this row."""
    extra: dict[str, Any] = {}
    if verb.hot and verb.request is not None:
        extra = body_schema(verb.request)  # the handler reads the body itself
    elif verb.hot and verb.query is not None:
        extra = {"parameters": _query_parameters(verb.query)}
    return {
        "path": verb.path,
        "methods": [verb.method],
        "name": verb.name,
        "summary": verb.summary,
        "description": verb.description,
        "tags": [verb.tag],
        "response_model": verb.response,
        "response_model_exclude_none": verb.exclude_none,
        "status_code": verb.status,
        "responses": {s: {"model": ErrorBody, "description": d} for s, d in verb.errors.items()},
        "openapi_extra": access(verb.access, **extra),
    }


def serve(router: APIRouter, verb: Verb[Any], glue: Glue | None = None) -> None:
    """Register `verb` on `router`, answered by `glue` (or, without one, by its service)."""
    if glue is not None:
        bind(verb, glue)
    router.add_api_route(endpoint=_endpoint(verb, glue or by_name(verb)), **route_args(verb))


def named_router() -> APIRouter:
    """Every row that names its service, served: a new verb of that kind needs no route."""
    router = APIRouter()
    for verb in VERBS.values():
        if verb.service is not None:
            serve(router, verb)
    return router


def by_name(verb: Verb[Any]) -> Glue:
    """The glue of a row that names its service method: called with the caller, the path
    parameters and the model's fields by name; its result is the answer, or what the answer's
    model is made `of`."""
    if verb.service is None:
        raise ValueError(f"the verb {verb.name!r} names no service and was given no glue")
    service, method = verb.service.split(".")
    maker = getattr(verb.response, "of", None)

    async def glue(call: Call[Any, Any]) -> BaseModel:
        fields = dict(call.rq) if isinstance(call.rq, BaseModel) else {}
        done = await getattr(getattr(call.hub, service), method)(call.who, **call.path, **fields)
        if verb.response is None or isinstance(done, verb.response) or maker is None:
            return done  # type: ignore[no-any-return]
        return maker(done)  # type: ignore[no-any-return]

    return glue


def _endpoint(verb: Verb[Any], glue: Glue) -> Callable[..., Awaitable[BaseModel]]:
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("request", keyword, annotation=Request)]
    principal = _PRINCIPAL.get(verb.access)
    if principal is not None:
        params.append(inspect.Parameter("who", keyword, annotation=principal))
    params += [inspect.Parameter(n, keyword, annotation=str) for n in verb.path_params]
    body, query = verb.request, verb.query
    if body is not None and verb.optional_body:
        optional = Annotated[body | None, Body()]  # type: ignore[valid-type]
        params.append(inspect.Parameter("rq", keyword, annotation=optional, default=None))
    elif body is not None:
        params.append(inspect.Parameter("rq", keyword, annotation=body))
    elif query is not None:
        parsed = Annotated[query, Query()]  # type: ignore[valid-type]
        params.append(inspect.Parameter("rq", keyword, annotation=parsed))

    async def endpoint(request: Request, who: Any = None, rq: Any = None, **path: str) -> Any:
        answer = await glue(Call(hub_of(request), who, rq, path, request))
        return answer if verb.response is not None else Response(status_code=verb.status)

    endpoint.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    endpoint.__name__ = verb.name
    return endpoint


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    """OpenAPI's parameters for a query a hot handler reads itself."""
    schema = model.model_json_schema()
    out = []
    for name, prop in schema.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if k not in ("title", "description")}
        if "anyOf" in prop:  # `int | None`: the parameter is the int, absent for None
            prop = {**next(p for p in prop.pop("anyOf") if p.get("type") != "null"), **prop}
            prop.pop("default", None)
        out.append({"name": name, "in": "query", "schema": prop})
    return out
