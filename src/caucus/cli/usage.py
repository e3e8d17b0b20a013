"""`caucus`, `caucus --help` and `caucus --version` without loading the command line.

The command line (Typer, Rich and every command's options) takes a tenth of a second or more to
import; what these three print changes only with the code. So `caucus/__main__.py` answers
them from `usage.txt`, the top-level help rendered here from the Typer app itself, in plain
text. `python -m caucus.cli.usage` writes it; a unit test fails when it is stale, as it does for
the bridge's `front.json`. A command's own `--help` still goes through Typer.
"""

from __future__ import annotations

import os
import sys

# Only what is loaded already: `re`, `textwrap` and `pathlib` would double the answer's time.
SNAPSHOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "usage.txt")
WIDTH = 100
# What __main__ answers without the command line.
FAST: tuple[list[str], ...] = (["--help"], [], ["--version"])


def read() -> str:
    with open(SNAPSHOT, encoding="utf-8") as f:
        return f.read()


def _summary(text: str | None) -> str:
    """A command's first paragraph, on one line."""
    first = (text or "").strip().split("\n\n", 1)[0]
    return " ".join(first.split())


def render() -> str:
    """The top-level help, from the Typer app (this imports the whole command line)."""
    import textwrap

    import typer.main

    from caucus.cli.main import app

    group = typer.main.get_command(app)
    names = list(getattr(group, "commands", {}))
    column = max(len(n) for n in names) + 4
    lines = [
        "Usage: caucus [OPTIONS] COMMAND [ARGS]...",
        "",
        f"  {_summary(group.help)}",
        "",
        "Options:",
        f"  {'--version':<{column - 2}}print the version and exit",
        f"  {'--help':<{column - 2}}show this message and exit",
        "",
        "Commands:",
    ]
    for name, command in getattr(group, "commands", {}).items():
        if command.hidden:
            continue
        wrapped = textwrap.wrap(_summary(command.help), WIDTH - column)
        lines.append(f"  {name:<{column - 2}}{wrapped[0] if wrapped else ''}")
        lines += [" " * column + more for more in wrapped[1:]]
    lines += ["", "Run `caucus COMMAND --help` for a command's options."]
    return "\n".join(lines) + "\n"


def answer(args: list[str]) -> int | None:
    """Print what `caucus <args>` prints and return its exit status, when these are args this
    answers (FAST); None otherwise. No args is a usage error, as Click makes it."""
    if args not in FAST:
        return None
    if args == ["--version"]:
        from caucus import __version__

        print(__version__)
        return 0
    sys.stdout.write(read())
    return 0 if args else 2


if __name__ == "__main__":
    with open(SNAPSHOT, "w", encoding="utf-8") as out:
        out.write(render())
    print(f"wrote {SNAPSHOT}")
