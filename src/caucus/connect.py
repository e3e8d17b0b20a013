"""`caucus connect`: each host's own MCP configuration, written (or printed) for Caucus.

An entry named `caucus` is merged into the host's file; every other server, and everything
else in the file, is kept as it was. Paths are absolute, to the `caucus` that runs this.

- claude: `~/.claude.json` (user) or `.mcp.json` (project); stdio `{"type": "stdio",
  "command", "args", "env"}`, HTTP `{"type": "http", "url"}`, both `"alwaysLoad": true` (Claude
  Code then waits for the server before the first turn, up to `MCP_CONNECT_TIMEOUT_MS`, and
  offers its tools whole: without it a session can start before the bridge answers, and the
  model meets `WaitForMcpServers` instead of `join`);
- codex: `~/.codex/config.toml` or `.codex/config.toml`; a `[mcp_servers.caucus]` table with
  `command`, `args` and an env table, or `url`, and `default_tools_approval_mode = "approve"`;
- gemini: `~/.gemini/settings.json` or `.gemini/settings.json`; `command`, `args`, `env`, or
  `httpUrl`, and `"trust": true`.

The last two let the host call the Caucus tools without asking each time: without them `codex
exec` refuses every call ("requires approval, but approval policy is never") and `gemini -p`
offers the model none of them. The tools reach only the hub, where the operator supervises
(approvals of risky calls are the hub's, ADR 0036); the user's own tools keep the host's rules.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import sys
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from caucus.files import private_dir, replace_atomically

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
    previous: dict[str, Any] | None = None  # that earlier entry

    def diff(self) -> str:
        """What changes in the file, as a unified diff of the `caucus` entry alone: a dry run
        shows this, never the rest of the file (`~/.claude.json` holds far more than servers,
        some of it private)."""
        before = _shown(self.host, self.previous) if self.previous is not None else []
        after = _shown(self.host, self.entry)
        where = "[mcp_servers]" if self.host is Host.CODEX else '"mcpServers"'
        lines = difflib.unified_diff(
            before,
            after,
            fromfile=str(self.path),
            tofile=f"{self.path} (the caucus entry in {where}; everything else kept)",
            lineterm="",
            n=len(before) + len(after),
        )
        return "\n".join(lines) + "\n"


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
    entry = _transport(host, hub, http=http, channel=channel)
    if host is Host.CODEX:
        entry["default_tools_approval_mode"] = "approve"
    elif host is Host.GEMINI:
        entry["trust"] = True
    return entry


def _transport(host: Host, hub: str, *, http: bool, channel: bool) -> dict[str, Any]:
    if http:
        url = hub.rstrip("/") + "/mcp"
        if host is Host.CLAUDE:
            return {"type": "http", "url": url, "alwaysLoad": True}
        if host is Host.GEMINI:
            return {"httpUrl": url}
        return {"url": url}
    command, *args = [*caucus_command(), "bridge"]
    env = {"CAUCUS_HUB": hub}
    if channel and host is Host.CLAUDE:
        env["CAUCUS_CLAUDE_CHANNEL"] = "1"
    if host is Host.CLAUDE:
        return {"type": "stdio", "command": command, "args": args, "env": env, "alwaysLoad": True}
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
        text, previous = _merge_toml(existing, entry, path)
    else:
        text, previous = _merge_json(existing, entry, path)
    return Plan(host, path, entry, text, bool(existing), previous is not None, previous)


def write(p: Plan) -> None:
    private_dir(p.path.parent)
    mode = p.path.stat().st_mode & 0o777 if p.path.exists() else 0o600
    replace_atomically(p.path, p.text.encode("utf-8"), mode=mode)


def _merge_json(
    existing: str, entry: dict[str, Any], path: Path
) -> tuple[str, dict[str, Any] | None]:
    try:
        data = json.loads(existing) if existing.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it, then run this again") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it, then run this again")
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: mcpServers is not an object; fix it, then run this again")
    previous = servers.get(ENTRY)
    servers[ENTRY] = entry
    return json.dumps(data, indent=2) + "\n", previous if isinstance(previous, dict) else None


def _merge_toml(
    existing: str, entry: dict[str, Any], path: Path
) -> tuple[str, dict[str, Any] | None]:
    """The `[mcp_servers.caucus]` tables replaced or appended; every other line kept."""
    try:
        data = tomllib.loads(existing)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it, then run this again") from exc
    previous = (data.get("mcp_servers") or {}).get(ENTRY)
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
    ours = _toml_table(entry)
    text = (body + "\n\n" if body else "") + "\n".join(ours) + "\n"
    tomllib.loads(text)  # what is written is TOML a host can read
    return text, previous if isinstance(previous, dict) else None


def _toml_table(entry: dict[str, Any]) -> list[str]:
    ours = [f"[mcp_servers.{ENTRY}]"]
    env = entry.get("env")
    for key, value in entry.items():
        if key != "env":
            ours.append(f"{key} = {_toml_value(value)}")
    if env:
        ours += ["", f"[mcp_servers.{ENTRY}.env]"]
        ours += [f"{k} = {_toml_value(v)}" for k, v in env.items()]
    return ours


def _shown(host: Host, entry: dict[str, Any]) -> list[str]:
    """The entry as it stands in the host's file."""
    if host is Host.CODEX:
        return _toml_table(entry)
    return f'"{ENTRY}": {json.dumps(entry, indent=2)}'.splitlines()


def _toml_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    # A JSON string (raw UTF-8, controls escaped) is a valid TOML basic string.
    return json.dumps(str(value), ensure_ascii=False)


# --- Gemini CLI's trusted folders ------------------------------------------------------------
# Gemini CLI runs no MCP server, not even a user-level one, in a folder the user has not
# trusted; the choices are kept in ~/.gemini/trustedFolders.json as {path: level}.
TRUST_FOLDER, TRUST_PARENT, DO_NOT_TRUST = "TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"


def gemini_trust_file(home: Path) -> Path:
    return home / ".gemini" / "trustedFolders.json"


def gemini_trusts(home: Path, folder: Path) -> bool | None:
    """Whether Gemini CLI trusts `folder`: None when its folder trust is turned off (every
    folder may then run servers), as its own rules read the file otherwise."""
    settings = home / ".gemini" / "settings.json"
    try:
        data = json.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
        enabled = data.get("security", {}).get("folderTrust", {}).get("enabled", True)
    except (ValueError, AttributeError):
        enabled = True
    if enabled is False:
        return None
    rules = _trust_rules(home)
    here = folder.resolve()
    if rules.get(str(here)) == DO_NOT_TRUST:
        return False
    for path, level in rules.items():
        effective = Path(path).parent if level == TRUST_PARENT else Path(path)
        if level in (TRUST_FOLDER, TRUST_PARENT) and here.is_relative_to(effective):
            return True
    return False


def trust_in_gemini(home: Path, folder: Path) -> Path:
    """Trust `folder` in Gemini CLI, as its own dialog's "Trust folder" does; every other
    rule is kept. The file written."""
    rules = _trust_rules(home)
    rules[str(folder.resolve())] = TRUST_FOLDER
    path = gemini_trust_file(home)
    private_dir(path.parent)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    replace_atomically(path, (json.dumps(rules, indent=2) + "\n").encode("utf-8"), mode=mode)
    return path


def _trust_rules(home: Path) -> dict[str, str]:
    path = gemini_trust_file(home)
    if not path.exists():
        return {}
    try:
        rules = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it, then run this again") from exc
    if not isinstance(rules, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it, then run this again")
    return {str(k): str(v) for k, v in rules.items()}
