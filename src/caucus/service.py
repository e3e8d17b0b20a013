"""`caucus service`: the hub as a per-user service, a systemd user unit (a launchd agent on
macOS), so it is up before any host needs it. Connectors start it when the hub is down; they
never spawn a hub of their own."""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from caucus.connect import caucus_command

UNIT = "caucus-hub.service"
LABEL = "dev.caucus.hub"


@dataclass(frozen=True, slots=True)
class ServiceFile:
    path: Path
    text: str
    kind: str  # "systemd" or "launchd"
    install: list[list[str]]  # commands that enable and start it
    uninstall: list[list[str]]
    start: list[str]
    status: list[str]


def service_file(home: Path | None = None, hub_args: list[str] | None = None) -> ServiceFile:
    home = home or Path.home()
    command = [*caucus_command(), "hub", *(hub_args or [])]
    if sys.platform == "darwin":
        return _launchd(home, command)
    return _systemd(home, command)


def _systemd(home: Path, command: list[str]) -> ServiceFile:
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    path = config / "systemd" / "user" / UNIT
    text = "\n".join(
        [
            "[Unit]",
            "Description=Caucus hub: a supervised coordination hub for AI agents",
            "Documentation=https://pypi.org/project/caucus-hub/",
            "",
            "[Service]",
            f"ExecStart={' '.join(_systemd_quote(a) for a in command)}",
            "Restart=on-failure",
            "RestartSec=2",
            "NoNewPrivileges=true",
            "UMask=0077",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
    )
    ctl = ["systemctl", "--user"]
    return ServiceFile(
        path,
        text,
        "systemd",
        install=[[*ctl, "daemon-reload"], [*ctl, "enable", "--now", UNIT]],
        uninstall=[[*ctl, "disable", "--now", UNIT], [*ctl, "daemon-reload"]],
        start=[*ctl, "start", UNIT],
        status=[*ctl, "is-active", UNIT],
    )


def _systemd_quote(arg: str) -> str:
    """systemd's own quoting: double quotes, with backslash and quote escaped; % doubled."""
    escaped = arg.replace("%", "%%")
    if not escaped or any(c in escaped for c in " \t\"'\\;$"):
        return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return escaped


def _launchd(home: Path, command: list[str]) -> ServiceFile:
    path = home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    logs = home / "Library" / "Logs" / "caucus-hub.log"
    plist = {
        "Label": LABEL,
        "ProgramArguments": command,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(logs),
        "StandardErrorPath": str(logs),
        "Umask": 0o077,
    }
    text = plistlib.dumps(plist).decode("utf-8")
    domain = f"gui/{os.getuid()}"
    return ServiceFile(
        path,
        text,
        "launchd",
        install=[["launchctl", "bootstrap", domain, str(path)]],
        uninstall=[["launchctl", "bootout", f"{domain}/{LABEL}"]],
        start=["launchctl", "kickstart", f"{domain}/{LABEL}"],
        status=["launchctl", "print", f"{domain}/{LABEL}"],
    )


def shown(commands: list[list[str]]) -> list[str]:
    return [shlex.join(c) for c in commands]


def installed(home: Path | None = None) -> ServiceFile | None:
    found = service_file(home)
    return found if found.path.exists() else None


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    """One service-manager command; a missing manager is a clear error, not a traceback."""
    if shutil.which(command[0]) is None:
        raise FileNotFoundError(f"{command[0]} is not on this machine: start the hub by hand")
    # The commands are this module's own (systemctl, launchctl), never a caller's text.
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=30)  # noqa: S603


def start_if_installed() -> bool:
    """Start the installed service (a connector found the hub down). False when there is no
    service to start, or it would not start."""
    found = installed()
    if found is None:
        return False
    try:
        return run(found.start).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
