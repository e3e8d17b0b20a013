"""Named SQL statements, loaded from `storage/sql/shared/queries.sql` and the dialect's own
`storage/sql/<dialect>/queries.sql` (issues 14 and 32).

A file holds blocks that each start with a `-- name: <name>` line (the style procrastinate
uses); the text up to the next such line is the statement. Repositories take their statements
from here by name, so no SQL lives in Python. A statement both backends run as written is in
the shared file once; one that must differ is in each dialect's file; a name in both the
shared file and a dialect's is refused, so no statement has two places to drift apart.

A block that starts with `-- fragment: <name>` is a condition several statements share (who
may read a message: `domain.visibility`); a statement names it as `{{name}}` and it is set in
where named, in parentheses, so a rule that must read the same in every statement is written
once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from operator import itemgetter
from typing import Any

Bind = Callable[[Mapping[str, Any]], tuple[Any, ...]]

_NAME = re.compile(r"^--\s*(name|fragment):\s*([a-z_][a-z0-9_]*)\s*$", re.M)
_USE = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")


class Queries:
    def __init__(self, dialect: str, statements: dict[str, str]) -> None:
        self.dialect = dialect
        self._statements = statements
        self._bound: dict[str, tuple[str, Bind]] = {}

    def __getitem__(self, name: str) -> str:
        try:
            return self._statements[name]
        except KeyError:
            raise KeyError(
                f"no query {name!r} in storage/sql/shared/queries.sql or "
                f"storage/sql/{self.dialect}/queries.sql"
            ) from None

    def bound(self, name: str) -> tuple[str, Bind]:
        """The statement with positional parameters, and its binder (see `positional`)."""
        found = self._bound.get(name)
        if found is None:
            found = self._bound[name] = positional(self[name])
        return found

    def names(self) -> set[str]:
        return set(self._statements)


def parse(text: str, where: str = "queries.sql") -> dict[str, str]:
    """The named statements in `text`, with the fragments they name set in; a name given
    twice, a fragment nobody defines, or SQL before the first name is an error (a file that
    reads wrong must not load)."""
    statements, fragments = blocks(text, where)
    return expand(statements, fragments, where)


def blocks(text: str, where: str = "queries.sql") -> tuple[dict[str, str], dict[str, str]]:
    """The named statements and the fragments of `text`, as written."""
    marks = list(_NAME.finditer(text))
    head = text[: marks[0].start()] if marks else text
    if any(line.strip() and not line.strip().startswith("--") for line in head.splitlines()):
        raise ValueError(f"{where}: SQL before the first '-- name:' line")
    found: dict[str, str] = {}
    fragments: dict[str, str] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = "\n".join(
            line
            for line in text[mark.end() : end].splitlines()
            if not line.strip().startswith("--")
        ).strip()
        kind, name = mark.group(1), mark.group(2)
        into = fragments if kind == "fragment" else found
        if name in found or name in fragments:
            raise ValueError(f"{where}: {kind} {name!r} is named twice")
        if not body:
            raise ValueError(f"{where}: {kind} {name!r} is empty")
        into[name] = body.rstrip(";")
    return found, fragments


def expand(statements: dict[str, str], fragments: dict[str, str], where: str) -> dict[str, str]:
    """Each statement with the fragments it names (`{{name}}`) set in, in parentheses."""

    def use(m: re.Match[str]) -> str:
        if m[1] not in fragments:
            raise ValueError(f"{where}: no fragment {m[1]!r} (define it with '-- fragment:')")
        return f"({fragments[m[1]]})"

    return {name: _USE.sub(use, sql) for name, sql in statements.items()}


_PARAM = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


def positional(sql: str) -> tuple[str, Bind]:
    """`:name` parameters as `?` in order, and the function that lays a mapping's values out
    in that order. SQLite binds a tuple by position markedly faster than a mapping by name,
    and the hot statements (send, claim, acknowledge) run thousands of times a second."""
    names = _PARAM.findall(sql)
    text = _PARAM.sub("?", sql)
    if not names:
        return text, _no_params
    if len(names) == 1:
        (only,) = names
        return text, lambda params: (params[only],)
    getter: Bind = itemgetter(*names)
    return text, getter


def _no_params(params: Mapping[str, Any]) -> tuple[Any, ...]:
    return ()


# An array parameter as its statement declares it: `CAST(:name AS <type>[])`.
_ARRAY = re.compile(r"CAST\(\s*:([a-z_][a-z0-9_]*)\s+AS\s+[A-Z][A-Z ]*\[\]\s*\)", re.I)


def pyformat(sql: str) -> str:
    """`:name` parameters as psycopg takes them (`%(name)s`), a literal `%` doubled. An array
    (`CAST(:name AS TEXT[])`) travels in binary (`%(name)b`): psycopg writes a list of strings
    as text by escaping each element with a regular expression, ~5 us per string on the writer
    thread, where the binary form packs it for a twentieth of that; a batch's sends and claims
    are a dozen such arrays each."""
    binary = set(_ARRAY.findall(sql))
    return _PARAM.sub(
        lambda m: f"%({m[1]}){'b' if m[1] in binary else 's'}", sql.replace("%", "%%")
    )


def _file(folder: str) -> tuple[dict[str, str], dict[str, str]]:
    path = resources.files("caucus.storage") / "sql" / folder / "queries.sql"
    return blocks(path.read_text(encoding="utf-8"), f"sql/{folder}/queries.sql")


def combine(shared: dict[str, str], own: dict[str, str], dialect: str) -> dict[str, str]:
    """The shared statements and the dialect's own; a name in both is an error."""
    twice = sorted(set(shared) & set(own))
    if twice:
        raise ValueError(
            f"sql/{dialect}/queries.sql redefines {', '.join(twice)} from sql/shared/queries.sql:"
            " keep a statement in one place (in both dialect files if it must differ)"
        )
    return {**shared, **own}


@cache
def queries(dialect: str) -> Queries:
    shared, shared_fragments = _file("shared")
    own, own_fragments = _file(dialect)
    fragments = combine(shared_fragments, own_fragments, dialect)
    found = expand(combine(shared, own, dialect), fragments, f"sql/{dialect}/queries.sql")
    if dialect == "postgres":
        found = {name: pyformat(sql) for name, sql in found.items()}
    return Queries(dialect, found)
