"""The app's own route table, for tests that must cover every route."""

from __future__ import annotations

import re

from fastapi import routing

from caucus.server import CaucusApp

# FastAPI's own documentation routes document themselves.
SELF_DOCUMENTING = {"/openapi.json", "/docs", "/docs/oauth2-redirect"}


def served_routes(app: CaucusApp) -> list[tuple[str, set[str], object]]:
    """(path, methods, original route) of everything the app routes, included routers too."""
    contexts = getattr(routing, "iter_route_contexts", None)  # FastAPI >= 0.16x includes lazily
    found = []
    routes = app.api_routes
    for ctx in contexts(routes) if contexts else routes:
        original = getattr(ctx, "original_route", ctx)
        path = re.sub(r":\w+}", "}", ctx.path)  # as OpenAPI writes {name:path}
        found.append((path, set(ctx.methods or ()), original))
    return found


def api_operations(app: CaucusApp) -> list[tuple[str, str]]:
    """(METHOD, path) of every API route, HEAD aside."""
    out = []
    for path, methods, _ in served_routes(app):
        if path in SELF_DOCUMENTING:
            continue
        out += [(m, path) for m in sorted(methods) if m != "HEAD"]
    return out
