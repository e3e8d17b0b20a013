"""`caucus service`: the hub as a per-user service (systemd, launchd) in one command
(`--dry-run` prints instead, `--json` for scripts)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Annotated, Any

import typer

from caucus.files import private_dir, replace_atomically
from caucus.service import installed, run, service_file, shown

service_app = typer.Typer(help="Run the hub as a per-user service (systemd, launchd).")


@service_app.command("install")
def service_install(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print, change nothing")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Install the hub as a user service and start it (at login from then on)."""
    found = service_file()
    report = {
        "kind": found.kind,
        "path": str(found.path),
        "unit": found.text,
        "commands": shown(found.install),
        "done": not dry_run,
    }
    if not dry_run:
        private_dir(found.path.parent)
        replace_atomically(found.path, found.text.encode("utf-8"), mode=0o644)
        _run_all(found.install)
    if json_output:
        print(json.dumps(report))
    elif dry_run:
        print(f"# would write {found.path}")
        print(found.text, end="")
        for line in shown(found.install):
            print(f"# then: {line}")
    else:
        print(f"installed {found.path} and started it; `caucus service status` says how it is")


@service_app.command("uninstall")
def service_uninstall(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print, change nothing")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Stop the hub service and remove it."""
    found = service_file()
    report = {"path": str(found.path), "commands": shown(found.uninstall), "done": not dry_run}
    if not dry_run and found.path.exists():
        _run_all(found.uninstall, check=False)
        found.path.unlink()
    if json_output:
        print(json.dumps(report))
    elif dry_run:
        for line in shown(found.uninstall):
            print(f"# would run: {line}")
        print(f"# would remove {found.path}")
    else:
        print(f"removed {found.path}")


@service_app.command("status")
def service_status(
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Whether the hub service is installed and running. Exit 1 when it is not running."""
    found = installed()
    report: dict[str, Any] = {"installed": found is not None, "running": False}
    if found is not None:
        report["path"] = str(found.path)
        try:
            report["running"] = run(found.status).returncode == 0
        except (OSError, subprocess.SubprocessError) as exc:
            report["error"] = str(exc)
    if json_output:
        print(json.dumps(report))
    elif found is None:
        print("not installed: `caucus service install` installs it")
    else:
        print(f"{'running' if report['running'] else 'not running'} ({found.path})")
    raise typer.Exit(0 if report["running"] else 1)


@service_app.command("start")
def service_start(
    quiet: Annotated[bool, typer.Option(help="say nothing (for a host's hook)")] = False,
) -> None:
    """Start the installed service if it is not running (what connectors do)."""
    found = installed()
    if found is None:
        if not quiet:
            print("not installed: `caucus service install` installs it", file=sys.stderr)
        raise typer.Exit(0 if quiet else 1)
    result = run(found.start)
    if result.returncode != 0 and not quiet:
        print(result.stderr.strip() or "the service did not start", file=sys.stderr)
    raise typer.Exit(0 if quiet else result.returncode)


def _run_all(commands: list[list[str]], *, check: bool = True) -> None:
    for command in commands:
        try:
            result = run(command)
        except (OSError, subprocess.SubprocessError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(1) from None
        if check and result.returncode != 0:
            print(f"error: {shown([command])[0]}: {result.stderr.strip()}", file=sys.stderr)
            raise typer.Exit(1)
