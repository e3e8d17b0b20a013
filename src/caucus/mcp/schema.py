"""JSON Schemas for the tool catalog: self-contained (no `$defs`/`$ref`) and compact.

Models read every tool's schemas on every turn, so they carry what a model needs and nothing
else. An input schema has types, enums, what is required, defaults and the descriptions
written for the model; no titles, and an optional argument is simply left out (no `null` in
its type; the tool refuses unknown arguments itself). An output schema names every field with
its type and enum, and leaves out what only an input needs: `required` (every field is always
there), defaults and descriptions (the tool's description and the protocol say what a result
means).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

_DROP = frozenset({"title", "additionalProperties"})
_OUTPUT_DROP = frozenset({"title", "required", "description", "default"})
_DEFAULTS = {"additionalProperties": True}  # what JSON Schema assumes anyway


def schema_of(model: type[BaseModel], *, output: bool = False) -> dict[str, Any]:
    """The schema of `model` with every `$ref` inlined and the noise removed. For an output
    schema, defaults are dropped too (they describe inputs)."""
    raw = model.model_json_schema(mode="serialization" if output else "validation")
    defs = raw.pop("$defs", {})
    compact: dict[str, Any] = _compact(_inline(raw, defs, ()), output=output)
    return compact


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(n, defs, seen) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            raise ValueError(f"recursive schema {name}: cannot be inlined")
        target = dict(defs[name])
        target.update({k: v for k, v in node.items() if k != "$ref"})
        return _inline(target, defs, (*seen, name))
    return {k: _inline(v, defs, seen) for k, v in node.items()}


def _compact(node: Any, *, output: bool) -> Any:
    if isinstance(node, list):
        return [_compact(n, output=output) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    drop = _OUTPUT_DROP if output else _DROP
    for key, value in node.items():
        if key in drop and not isinstance(value, dict):
            continue
        if key == "default" and value is None:
            continue
        if key in _DEFAULTS and _DEFAULTS[key] == value:
            continue
        if key == "properties":
            out[key] = {name: _compact(v, output=output) for name, v in value.items()}
            continue
        out[key] = _compact(value, output=output)
    any_of = out.get("anyOf")
    if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
        other = next(o for o in any_of if o != {"type": "null"})
        if isinstance(other.get("type"), str) and not (set(other) & set(out) - {"anyOf"}):
            del out["anyOf"]
            # An input leaves an optional argument out rather than sending null.
            merged = {**other, "type": [other["type"], "null"] if output else other["type"]}
            merged.update(out)
            out = merged
            if isinstance(out.get("enum"), list):
                # An output's null must be one of the enum's values too, or it fails the check.
                values = [v for v in out["enum"] if v is not None]
                out["enum"] = [*values, None] if output else values
    return out
