"""The layer rules of the house, read from the code's own imports (issue 32): drift fails here,
not in a review. Each rule names a package and what it may import of Caucus."""

from __future__ import annotations

import ast
import re
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
        if isinstance(node, ast.ImportFrom) and node.module == "caucus" and node.level == 0:
            names = [f"caucus.{a.name}" for a in node.names]  # `from caucus import services`
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
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
    # The hub does not stand on the agent: the rules of the room and the hub's deliberations
    # stand on `models`, never on the native runtime, an MCP door or the HTTP client.
    "services": ("caucus.runtime", "caucus.mcp", "caucus.client", "caucus.api", "caucus.cli"),
    "deliberation": ("caucus.runtime", "caucus.mcp", "caucus.client", "caucus.services"),
    "models": ("caucus.runtime", "caucus.mcp", "caucus.services", "caucus.storage"),
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


ARCHITECTURE = SRC.parents[1] / "docs" / "architecture.md"
_TABLE_ROW = re.compile(r"^\| `(\w+)` \| .* \| (.*) \|$")
_CROSSING = re.compile(r"^- `(\w+)` → `(\w+)`")


def packages() -> list[str]:
    return sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").exists())


def package_edges() -> dict[str, set[str]]:
    """package -> the other Caucus packages its modules import."""
    inside = set(packages())
    edges: dict[str, set[str]] = {p: set() for p in inside}
    for package in inside:
        for path in (SRC / package).rglob("*.py"):
            for _, module in imports_of(path):
                parts = module.split(".")
                if len(parts) > 1 and parts[1] in inside and parts[1] != package:
                    edges[package].add(parts[1])
    return edges


def the_map() -> tuple[dict[str, set[str] | None], set[tuple[str, str]]]:
    """From docs/architecture.md: each package's permitted imports (None: everything), and
    the crossings still to cut."""
    permitted: dict[str, set[str] | None] = {}
    crossings: set[tuple[str, str]] = set()
    for line in ARCHITECTURE.read_text("utf-8").splitlines():
        if row := _TABLE_ROW.match(line):
            name, may = row.groups()
            names = set(re.findall(r"`(\w+)`", may))
            permitted[name] = None if may.strip() == "everything" else names
        elif crossing := _CROSSING.match(line):
            crossings.add((crossing.group(1), crossing.group(2)))
    return permitted, crossings


def test_the_architecture_map_names_every_package_and_every_crossing_still_to_cut() -> None:
    permitted, documented = the_map()
    assert sorted(permitted) == packages()
    actual = {
        (package, target)
        for package, targets in package_edges().items()
        for target in targets
        if (allowed_here := permitted[package]) is not None and target not in allowed_here
    }
    assert actual - documented == set(), "new upward imports: fix them, or map them"
    assert documented - actual == set(), "cut already: strike them from docs/architecture.md"


def module_graph() -> dict[str, set[str]]:
    """Each package and each module at the root, as one node -> the nodes it imports."""

    def node(module: str) -> str:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else "caucus"

    graph: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        relative = path.relative_to(SRC)
        here = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        here = "caucus" if here == "__init__" else here
        targets = graph.setdefault(here, set())
        targets |= {t for _, m in imports_of(path) if (t := node(m)) != here}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_package_or_root_module_imports_in_a_cycle() -> None:
    assert cycles(module_graph()) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def loaded_with(path: Path) -> set[str]:
    """The Caucus modules `path` imports as it loads (its top level, not under TYPE_CHECKING
    and not inside a function): the imports that can make a cycle at import time."""
    found: set[str] = set()
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module == "caucus":
            found |= {f"caucus.{a.name}" for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m.startswith("caucus.")}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(("caucus", *parts)).removesuffix(".__init__")


@pytest.mark.parametrize("package", packages())
def test_no_two_modules_of_a_package_import_each_other_as_they_load(package: str) -> None:
    modules = {module_name(p): p for p in (SRC / package).rglob("*.py")}
    graph = {
        name: {m for m in loaded_with(path) if m in modules and m != name}
        for name, path in modules.items()
    }
    assert cycles(graph) == []


def test_nothing_reaches_into_another_object_s_storage_engine() -> None:
    """The hub's engine is its own (`Hub._db`): what crosses processes goes through its
    notifier, and everything else through a service."""
    reached = [
        f"{path.relative_to(SRC)}:{node.lineno}"
        for path in sorted(SRC.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr in ("_db", "db")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "settings", "s"))
        and not (isinstance(node.value, ast.Attribute) and node.value.attr == "settings")
    ]
    assert reached == []


_ROOT_ROW = re.compile(r"^\| `(\w+)\.py` \| .* \| (.*) \|$")


def test_every_module_at_the_root_has_a_row_and_keeps_to_it() -> None:
    rows: dict[str, set[str] | None] = {}
    for line in ARCHITECTURE.read_text("utf-8").splitlines():
        if row := _ROOT_ROW.match(line):
            name, may = row.groups()
            rows[name] = None if may.strip() == "everything" else set(re.findall(r"`(\w+)`", may))
    assert sorted(rows) == sorted(p.stem for p in SRC.glob("*.py"))
    broken = []
    for path in sorted(SRC.glob("*.py")):
        permitted = rows[path.stem]
        for line, module in imports_of(path):
            target = module.split(".")[1] if "." in module else "caucus"
            if permitted is not None and target not in (permitted | {"__version__", "caucus"}):
                broken.append(f"{path.name}:{line} imports {module}")
    assert broken == []
