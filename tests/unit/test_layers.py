"""The layer rules of the house, read from the code's own imports (issue 32): drift fails here,
not in a review. Each rule names a package and what it may import of Caucus."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "caucus"

# package -> the Caucus packages and modules its modules may import (their own included)
RULES: dict[str, tuple[str, ...]] = {
    "domain": ("caucus.domain", "caucus.errors"),
    "wire": ("caucus.wire", "caucus.domain", "caucus.errors"),
}


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every `caucus` import in the file, at any depth (TYPE_CHECKING too)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n == "caucus" or n.startswith("caucus.")]
    return found


def allowed(module: str, permitted: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in permitted)


@pytest.mark.parametrize("package", sorted(RULES))
def test_a_package_imports_only_what_its_layer_allows(package: str) -> None:
    permitted = RULES[package]
    broken = [
        f"{path.relative_to(SRC)}:{line} imports {module}"
        for path in sorted((SRC / package).rglob("*.py"))
        for line, module in imports_of(path)
        if not allowed(module, permitted)
    ]
    assert broken == [], "\n".join(broken)


# package -> what it must never import: the transports read and change the room through
# services only.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "api": ("caucus.storage",),
    "dashboard": ("caucus.storage",),
    "mcp": ("caucus.storage",),
    "web": ("caucus.storage",),
    "runtime": ("caucus.storage", "caucus.services"),
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_what_a_package_must_never_import(package: str) -> None:
    forbidden = FORBIDDEN[package]
    broken = [
        f"{path.relative_to(SRC)}:{line} imports {module}"
        for path in sorted((SRC / package).rglob("*.py"))
        for line, module in imports_of(path)
        if allowed(module, forbidden)
    ]
    assert broken == [], "\n".join(broken)
