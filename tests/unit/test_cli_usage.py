"""`caucus`, `caucus --help` and `caucus --version` answer from a snapshot, without importing
the command line (Typer, Rich, the commands): what they print is what the Typer app says, and
the snapshot is fresh (`python -m caucus.cli.usage` rewrites it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from caucus import __version__
from caucus.cli.usage import read, render


def test_the_snapshot_is_what_the_command_line_renders() -> None:
    assert read() == render(), "src/caucus/cli/usage.txt is stale: run `python -m caucus.cli.usage`"


def test_every_command_is_listed() -> None:
    import typer.main

    from caucus.cli.main import app

    listed = read()
    for name, command in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        assert command.hidden or f"\n  {name} " in listed, name


PROBE = """
import json, sys
sys.argv = ["caucus", *json.loads(sys.argv[1])]
from caucus.__main__ import main
try:
    main()
except SystemExit as exc:
    code = exc.code
loaded = sorted(m for m in ("typer", "rich", "click", "caucus.cli.main") if m in sys.modules)
print(json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "code"),
    [(["--help"], 0), ([], 2), (["--version"], 0)],
    ids=["help", "bare", "version"],
)
def test_the_answer_comes_without_loading_the_command_line(args: list[str], code: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, check=True
    )
    probe = json.loads(done.stderr.strip().splitlines()[-1])
    assert probe == {"code": code, "loaded": []}
    if args == ["--version"]:
        assert done.stdout == f"{__version__}\n"
    else:
        assert done.stdout == read()


def test_anything_else_still_goes_through_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "caucus", "version", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout)["version"] == __version__
