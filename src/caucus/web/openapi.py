"""/openapi.json as the hub really answers: its own error body on every operation, and every
status an operation can answer, not only the ones its route lists.

FastAPI documents its own validation error shape (`HTTPValidationError`) on every route with
input, which the hub never sends: `web/errors.py` maps every failure to `ErrorBody`. And some
answers come from layers in front of the routes (the Host and Origin guard, the one body
reader, the storage), so no route lists them; they are added here by what the operation is.
"""

from __future__ import annotations

from typing import Any

ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}

# status -> (when, which operations): a predicate over (method, operation).
_ALWAYS = {
    403: "forbidden: a browser Origin other than the hub's own, or a role that may not",
    421: "misdirected_request: a Host this hub does not answer to",
    503: "storage_error: the hub is starting, or could not store the request; retry",
}
_AUTHENTICATED = {401: "unauthorized: no token, or one the hub does not know (any more)"}
_WITH_BODY = {
    400: "malformed_body: not UTF-8, not JSON, a key given twice, NaN, or nested too deep",
    413: "payload_too_large: a body over the hub's body limit",
    415: "unsupported_media_type: a body that is not JSON",
    422: "invalid_request: a field that is missing, of the wrong type, out of range, or "
    "holds a lone UTF-16 surrogate; `field` names it",
}
_WITH_PARAMETERS = {422: "invalid_request: a parameter out of range or of the wrong type"}
_WITH_PATH = {404: "not_found: nothing by that name or id"}
_WRITES = {
    429: "rate_limited or a cap: `Retry-After` says when to retry",
    507: "storage_full: the hub's disk is full",
}


def _describe(operation: dict[str, Any], status: int, when: str) -> None:
    responses = operation.setdefault("responses", {})
    entry = responses.setdefault(str(status), {"description": when})
    entry["content"] = {"application/json": {"schema": ERROR_REF}}


def truthful(spec: dict[str, Any], access_key: str) -> dict[str, Any]:
    """`spec` with the hub's error body and every status it answers, in place; `access_key`
    is the operation field naming who may call it."""
    for operations in spec.get("paths", {}).values():
        for method, operation in operations.items():
            for status, response in list(operation.get("responses", {}).items()):
                if status.startswith(("4", "5")):
                    _describe(operation, int(status), response.get("description", ""))
            statuses = dict(_ALWAYS)
            if operation.get(access_key, "public") != "public":
                statuses.update(_AUTHENTICATED)
            if "requestBody" in operation:
                statuses.update(_WITH_BODY)
            if operation.get("parameters"):
                statuses.update(_WITH_PARAMETERS)
            if any(p.get("in") == "path" for p in operation.get("parameters", [])):
                statuses.update(_WITH_PATH)
            if method != "get":
                statuses.update(_WRITES)
            for status, when in statuses.items():
                if str(status) not in operation.get("responses", {}):
                    _describe(operation, status, when)
    schemas = spec.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return spec


def without(table: dict[int | str, Any], *codes: int) -> dict[int | str, Any]:
    """A router's table of documented errors, less those one of its routes cannot answer."""
    return {code: entry for code, entry in table.items() if code not in codes}
