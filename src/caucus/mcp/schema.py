"""The input schemas of the tool catalog: self-contained (no `$defs`/`$ref`) and lean.

Models read every tool's schemas on every turn, so an input schema carries what a model needs
to fill the call in and nothing else: types, enums, what is required, and the descriptions
written for the model. No titles, no defaults and no bounds: what leaving an argument out
means, and the bounds, are checked by the tool, which names them in its refusal, and the
protocol states them once. An optional argument is simply left out (no `null` in its type).
A tool's output schema is its view's (`mcp/views.py`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

_DROP = frozenset(
    {
        "title",
        "additionalProperties",
        "default",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "maxLength",
    }
)


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The input schema of `model` with every `$ref` inlined and the noise removed."""
    raw = model.model_json_schema(mode="validation")
    defs = raw.pop("$defs", {})
    compact: dict[str, Any] = _compact(_inline(raw, defs, ()))
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
        if "enum" in target:  # an enum class's docstring is for people; the field says enough
            target.pop("description", None)
        target.update({k: v for k, v in node.items() if k != "$ref"})
        return _inline(target, defs, (*seen, name))
    return {k: _inline(v, defs, seen) for k, v in node.items()}


def _compact(node: Any) -> Any:
    if isinstance(node, list):
        return [_compact(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP and not isinstance(value, dict):
            continue
        if key == "properties":
            out[key] = {name: _compact(v) for name, v in value.items()}
            continue
        out[key] = _compact(value)
    any_of = out.get("anyOf")
    if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
        other = next(o for o in any_of if o != {"type": "null"})
        if isinstance(other.get("type"), str) and not (set(other) & set(out) - {"anyOf"}):
            del out["anyOf"]  # an input leaves an optional argument out rather than send null
            out = {**other, **out}
    return out
