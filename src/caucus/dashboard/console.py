"""The operator console: one HTML page and its static assets, shipped as package data.

No build step: the page loads ES modules (the console's own, and the vendored Preact and htm in
`static/vendor/`, see VENDORED.json there) straight from the hub. The page holds no inline
script or style, so the hub's CSP (`script-src 'self'`) applies to it unweakened.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import APIRouter
from starlette.responses import FileResponse, Response

from caucus.domain.control import Access
from caucus.errors import NotFound
from caucus.web.access import access

router = APIRouter(tags=["console"])

STATIC = Path(str(resources.files("caucus.dashboard").joinpath("static")))
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
# The page and its modules change with the hub: revalidate (cheap, with the ETag) every load.
NO_CACHE = {"Cache-Control": "no-cache"}
# Everything servable, found once: a request can only name one of these, never a path.
ASSETS = {
    path.relative_to(STATIC).as_posix(): path
    for path in STATIC.rglob("*")
    if path.suffix in TYPES and path.is_file()
}


@router.get(
    "/",
    summary="The operator console (sign in with the token from the URL `caucus hub` prints)",
    response_class=FileResponse,
    openapi_extra=access(Access.PUBLIC),
)
async def console() -> Response:
    return FileResponse(STATIC / "index.html", media_type=TYPES[".html"], headers=NO_CACHE)


@router.get(
    "/console/{asset:path}",
    summary="The console's scripts, styles and vendored libraries",
    response_class=FileResponse,
    openapi_extra=access(Access.PUBLIC),
)
async def asset(asset: str) -> Response:
    path = ASSETS.get(asset)
    if path is None:
        raise NotFound(f"no console asset {asset!r}")
    return FileResponse(path, media_type=TYPES[path.suffix], headers=NO_CACHE)
