"""`tools/list` from a template: the catalog's tools as the MCP SDK writes them, with `{limit}`
and `{default_name}` placeholders still in their descriptions, filled for one listing.

Both the SDK-served bridge (`mcp/server.py`) and the bridge's fast front (`mcp/front.py`, which
answers before the SDK has loaded) list through `fill_tools`, so the two answers are one by
construction. Standard library only: the front imports this.
"""

from __future__ import annotations

from typing import Any


def fill(node: Any, values: dict[str, Any]) -> Any:
    """`node` with every placeholder in its descriptions filled in."""
    if isinstance(node, dict):
        return {
            k: (
                v.format_map(values)
                if k == "description" and isinstance(v, str)
                else fill(v, values)
            )
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [fill(v, values) for v in node]
    return node


def _filled(key: str, value: Any, values: dict[str, Any]) -> Any:
    if key == "description" and isinstance(value, str):
        return value.format_map(values)
    return fill(value, values)


def fill_tools(
    template: list[dict[str, Any]], values: dict[str, Any], *, with_outputs: bool = True
) -> list[dict[str, Any]]:
    """The tools of `template` as one listing shows them: their descriptions and their
    arguments' descriptions filled; their results' schemas as they are, or left out for a host
    that reads results as text only (`mcp/server.py`, TEXT_ONLY_HOSTS)."""
    return [
        {
            **{k: v for k, v in tool.items() if with_outputs or k != "outputSchema"},
            "description": tool["description"].format_map(values),
            "inputSchema": fill(tool["inputSchema"], values),
        }
        for tool in template
    ]


def listing_values(limits: dict[str, Any], default_name: str | None) -> dict[str, Any]:
    """What a listing's placeholders are filled with."""
    return {**limits, "default_name": default_name or "your client's name"}
