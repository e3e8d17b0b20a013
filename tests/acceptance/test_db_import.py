"""`caucus db import` as a user runs it (issue 53): a room's transcript export carried into
another database, a rerun adding nothing, JSON Lines on standard input, and a bad message
stopping the import with where it is and what to do, what came before it kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from caucus.dashboard.export import export_chunks
from caucus.testing import make_hub


def caucus(*args: str, stdin: str | None = None, home: Path) -> subprocess.CompletedProcess[str]:
    env = {"CAUCUS_HOME": str(home), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "caucus", "db", "import", *args]
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, env=env, timeout=120
    )


async def test_an_export_is_imported_once_and_a_bad_line_says_where(tmp_path: Path) -> None:
    async with make_hub(tmp_path / "old") as old:
        alice = (await old.principals.register(name="alice")).peer
        await old.principals.register(name="bob")
        for n in range(5):
            await old.delivery.send(alice, to="bob", content=f"note {n}")

        async def pages(after: int) -> list:  # type: ignore[type-arg]
            return await old.history.after(after, 1000)

        chunks = export_chunks(pages, "json", None, None, old.clock.now())
        export = b"".join([c async for c in chunks]).decode()
    (tmp_path / "export.json").write_text(export)
    new = tmp_path / "new.db"
    done = caucus(str(tmp_path / "export.json"), "--db", str(new), "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) | {"database": None} == {
        "database": None,
        "read": 5,
        "added": 5,
        "skipped": 0,
        "indexed": 5,
    }
    again = caucus(str(tmp_path / "export.json"), "--db", str(new), home=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "added 0 of 5 messages (5 were here already)" in again.stdout
    good = json.loads(export)["messages"][0] | {"id": "another", "content": "kept"}
    bad = good | {"id": "bad", "to": "not a name"}
    lines = "\n".join(json.dumps(m) for m in (good, bad)) + "\n"
    failed = caucus("-", "--db", str(new), stdin=lines, home=tmp_path)
    assert failed.returncode == 2
    assert "message 2: invalid recipient 'not a name'" in failed.stderr
    assert "1 messages before it are stored" in failed.stderr
    async with make_hub(tmp_path / "check", db=str(new)) as room:
        contents = [m.content for m in await room.history.after(0, 100)]
    assert contents == [f"note {n}" for n in range(5)] + ["kept"]
