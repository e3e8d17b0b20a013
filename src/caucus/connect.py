"""`caucus connect`: each host's own MCP configuration, written (or printed) for Caucus.

An entry named `caucus` is merged into the host's file; every other server, and everything
else in the file, is kept as it was. Paths are absolute, to the `caucus` that runs this.

- claude: `~/.claude.json` (user) or `.mcp.json` (project); stdio `{"type": "stdio",
  "command", "args", "env"}`, HTTP `{"type": "http", "url"}`;
- codex: `~/.codex/config.toml` or `.codex/config.toml`; a `[mcp_servers.caucus]` table with
  `command`, `args` and an env table, or `url`;
- gemini: `~/.gemini/settings.json` or `.gemini/settings.json`; `command`, `args`, `env`, or
  `httpUrl`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from caucus.files import replace_atomically

ENTRY = "caucus"


class Host(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"
    GEMINI = "gemini"


class Scope(StrEnum):
    USER = "user"
    PROJECT = "project"


class ConfigError(ValueError):
    """The host's file exists but cannot be read as what it should be: it is left alone."""


@dataclass(frozen=True, slots=True)
class Plan:
    host: Host
    path: Path
    entry: dict[str, Any]  # what goes under the `caucus` name
    text: str  # the whole file as it will be written
    existed: bool
    replaced: bool  # an earlier `caucus` entry is replaced


def caucus_command() -> list[str]:
    """The installed `caucus`, absolute: beside this Python, else on PATH, else `-m caucus`."""
    beside = Path(sys.executable).parent / ("caucus.exe" if os.name == "nt" else "caucus")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("caucus")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "caucus"]


def entry_for(host: Host, hub: str, *, http: bool, channel: bool = False) -> dict[str, Any]:
    if http:
        url = hub.rstrip("/") + "/mcp"
        if host is Host.CLAUDE:
            return {"type": "http", "url": url}
        if host is Host.GEMINI:
            return {"httpUrl": url}
        return {"url": url}
    command, *args = [*caucus_command(), "bridge"]
    env = {"CAUCUS_HUB": hub}
    if channel and host is Host.CLAUDE:
        env["CAUCUS_CLAUDE_CHANNEL"] = "1"
    if host is Host.CLAUDE:
        return {"type": "stdio", "command": command, "args": args, "env": env}
    return {"command": command, "args": args, "env": env}


def config_path(host: Host, scope: Scope, home: Path, project: Path) -> Path:
    if host is Host.CLAUDE:
        return home / ".claude.json" if scope is Scope.USER else project / ".mcp.json"
    base = home if scope is Scope.USER else project
    if host is Host.CODEX:
        return base / ".codex" / "config.toml"
    return base / ".gemini" / "settings.json"


def plan(
    host: Host,
    scope: Scope,
    hub: str,
    *,
    http: bool = False,
    channel: bool = False,
    home: Path | None = None,
    project: Path | None = None,
) -> Plan:
    path = config_path(host, scope, home or Path.home(), project or Path.cwd())
    entry = entry_for(host, hub, http=http, channel=channel)
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    if host is Host.CODEX:
        text, replaced = _merge_toml(existing, entry, path)
    else:
        text, replaced = _merge_json(existing, entry, path)
    return Plan(host, path, entry, text, bool(existing), replaced)


def write(p: Plan) -> None:
    p.path.parent.mkdir(parents=True, exist_ok=True)
    mode = p.path.stat().st_mode & 0o777 if p.path.exists() else 0o600
    replace_atomically(p.path, p.text.encode("utf-8"), mode=mode)


def _merge_json(existing: str, entry: dict[str, Any], path: Path) -> tuple[str, bool]:
    try:
        data = json.loads(existing) if existing.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it, then run this again") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it, then run this again")
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: mcpServers is not an object; fix it, then run this again")
    replaced = ENTRY in servers
    servers[ENTRY] = entry
    return json.dumps(data, indent=2) + "\n", replaced


def _merge_toml(existing: str, entry: dict[str, Any], path: Path) -> tuple[str, bool]:
    """The `[mcp_servers.caucus]` tables replaced or appended; every other line kept."""
    try:
        data = tomllib.loads(existing)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it, then run this again") from exc
    replaced = ENTRY in (data.get("mcp_servers") or {})
    kept: list[str] = []
    skipping = False
    for line in existing.splitlines():
        header = line.strip()
        if header.startswith("[") and not header.startswith("[["):
            name = header.strip("[]").strip()
            skipping = name in (f"mcp_servers.{ENTRY}", f"mcp_servers.{ENTRY}.env")
        elif header.startswith("[["):
            skipping = False
        if not skipping:
            kept.append(line)
    body = "\n".join(kept).rstrip()
    ours = [f"[mcp_servers.{ENTRY}]"]
    env = entry.get("env")
    for key, value in entry.items():
        if key != "env":
            ours.append(f"{key} = {_toml_value(value)}")
    if env:
        ours += ["", f"[mcp_servers.{ENTRY}.env]"]
        ours += [f"{k} = {_toml_value(v)}" for k, v in env.items()]
    text = (body + "\n\n" if body else "") + "\n".join(ours) + "\n"
    tomllib.loads(text)  # what is written is TOML a host can read
    return text, replaced


def _toml_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    # A JSON string (raw UTF-8, controls escaped) is a valid TOML basic string.
    return json.dumps(str(value), ensure_ascii=False)
