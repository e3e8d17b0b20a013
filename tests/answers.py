"""The answers walker's eye (issue 49): an answer body checked against the shape
/openapi.json documents for its route and status, strictly. A field the answer carries that
the document does not name is "produced but not documented"; a field the document requires
that the answer lacks is "documented but not produced"."""

from __future__ import annotations

import copy
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

REF_BASE = "urn:caucus:openapi"


def closed(schema: Any) -> Any:
    """`schema` with every object that names its properties closed to others."""
    if isinstance(schema, dict):
        out = {key: closed(value) for key, value in schema.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [closed(item) for item in schema]
    return schema


class Shapes:
    """The documented answer shapes of one OpenAPI document."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        components = closed(copy.deepcopy(spec.get("components", {})))
        document = {"components": components}
        self._registry: Registry[Any] = Registry().with_resource(
            REF_BASE, Resource(contents=document, specification=DRAFT202012)
        )

    def operations(self) -> dict[str, dict[str, Any]]:
        """ "METHOD /path" -> its operation."""
        return {
            f"{method.upper()} {path}": op
            for path, ops in self.spec["paths"].items()
            for method, op in ops.items()
        }

    def schema(self, op: str, status: int) -> dict[str, Any] | None:
        """The JSON schema documented for `op` answering `status` (None: no JSON body is)."""
        response = self.operations()[op]["responses"].get(str(status))
        if response is None:
            raise KeyError(f"{op} does not document {status}")
        found = response.get("content", {}).get("application/json", {}).get("schema")
        return found or None

    def problems(self, op: str, status: int, body: Any) -> list[str]:
        """What is wrong with `body` as `op`'s documented answer with `status`."""
        try:
            schema = self.schema(op, status)
        except KeyError as exc:
            return [str(exc)]
        if schema is None:
            return []
        rooted = _rooted(closed(schema))
        validator = Draft202012Validator(rooted, registry=self._registry)
        out = []
        for error in validator.iter_errors(body):
            where = "/".join(str(p) for p in error.absolute_path) or "(the answer)"
            if error.validator == "additionalProperties":
                out.append(f"{where}: produced but not documented: {error.message}")
            elif error.validator == "required":
                out.append(f"{where}: documented but not produced: {error.message}")
            else:
                out.append(f"{where}: {error.message}")
        return out


def _rooted(schema: Any) -> Any:
    """`$ref`s into the registered document."""
    if isinstance(schema, dict):
        return {
            key: (
                f"{REF_BASE}{value}" if key == "$ref" and value.startswith("#/") else _rooted(value)
            )
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_rooted(item) for item in schema]
    return schema


def _rerooted(key: str, value: Any) -> Any:
    if key == "$ref" and isinstance(value, str) and value.startswith("#/"):
        return f"{REF_BASE}{value}"
    return _rooted(value)
