"""The hub's verbs: one row each (`Verb`, `wire/verb.py`), read by every door.

Adding a verb is its row in one of this package's sections, its service method, its test and
its line in docs/api.md: a row with `service` is routed by `web/verbs.py` and reached by
`HubClient.call(name, ...)`. What is not here answers something other than a JSON model: the
transcript exports, the console's pages and live feed, the A2A door's JSON-RPC and cards.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from caucus.wire.verb import Verb
from caucus.wire.verbs import (
    control,
    files,
    identity,
    messages,
    meta,
    oversight,
    room,
    teams,
    work,
)

__all__ = [
    "HOT",
    "VERBS",
    "Verb",
    "control",
    "files",
    "hot_verb",
    "identity",
    "messages",
    "meta",
    "oversight",
    "room",
    "teams",
    "work",
]

# Every row of the sections, in their order (a row is a module-level `Verb` of one of them).
_ROWS: tuple[Verb[Any], ...] = tuple(
    row
    for section in (identity, messages, room, work, files, teams, meta, control, oversight)
    for row in vars(section).values()
    if isinstance(row, Verb)
)
VERBS: Mapping[str, Verb[Any]] = {v.name: v for v in _ROWS}
HOT: tuple[Verb[Any], ...] = tuple(v for v in VERBS.values() if v.hot)


_HOT_PATTERNED = tuple(v for v in HOT if v.path_params)
# Each exact one's answer made once: a parked receive holds it while it waits (10,000 of them).
_HOT_EXACT: dict[tuple[str, str], tuple[Verb[Any], dict[str, str]]] = {
    (v.method, v.path): (v, {}) for v in HOT if not v.path_params
}


def hot_verb(method: str, path: str) -> tuple[Verb[Any], dict[str, str]] | None:
    """The hot verb `method path` names, with its path parameters (the lanes' one match; the
    parameters of an exact one are shared: read them, never change them)."""
    exact = _HOT_EXACT.get((method, path))
    if exact is not None:
        return exact
    for verb in _HOT_PATTERNED:
        found = verb.match(method, path)
        if found is not None:
            return verb, found
    return None
