"""From a config to something that deliberates: the backend, the evidence tools, the ledger.

Shared by `caucus deliberate`, `caucus briefing` and `caucus init`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caucus.deliberation.backends import CallableBackend, ClaudeCliCompleter, OpenAICompleter
from caucus.deliberation.config import (
    ConfigError,
    DeliberationConfig,
    find,
    load,
    parse,
)
from caucus.deliberation.tools import EvidenceToolsError, ReadOnlyTools
from caucus.models.mcp_tools import ToolServerError

MODEL_ENV = "CAUCUS_AGENT_MODEL"


def resolve(
    config: Path | None, flags: dict[str, Any], *, cwd: Path
) -> tuple[DeliberationConfig, str]:
    """The config to use and where it came from. `--config` and setting flags exclude each
    other: a run is described by one of them, never a mix."""
    given = {k: v for k, v in flags.items() if v is not None}
    if config is not None and given:
        names = ", ".join("--" + k.replace("_", "-") for k in given)
        raise ConfigError(f"--config and {names} exclude each other: put {names} in {config}")
    if config is not None:
        return load(config), str(config)
    if given:
        data: dict[str, Any] = {}
        backend: dict[str, Any] = {}
        for key, value in given.items():
            if key in ("backend", "model", "base_url"):
                backend["type" if key == "backend" else key] = value
            elif key == "rounds":
                data["max_rounds"] = value
            else:
                data[key] = value
        if backend:
            data["backend"] = backend
        return parse(data, origin="the command's flags").resolved(cwd), "flags"
    found = find(cwd)
    if found is not None:
        return load(found), str(found)
    return parse({}, origin="the defaults").resolved(cwd), "defaults"


@dataclass(slots=True)
class Backend:
    completer: CallableBackend
    describe: str


@contextlib.asynccontextmanager
async def backend_for(config: DeliberationConfig) -> AsyncIterator[Backend]:
    """The configured backend, checked, with its evidence tools started (and closed after)."""
    b = config.backend
    if b.type == "claude-cli":
        cli = ClaudeCliCompleter(
            command=b.command,
            model=b.model,
            mcp_config=b.mcp_config,
            allowed_tools=b.allowed_tools,
            timeout=b.timeout_seconds,
        )
        cli.argv()  # finds the executable now, or says how to install it
        wrapped = CallableBackend(cli.complete)
        wrapped.tools = cli.tools
        yield Backend(wrapped, f"claude-cli {b.model or '(its default model)'}")
        return
    model = b.model or os.environ.get(MODEL_ENV)
    if not model:
        raise ConfigError(
            "no model: give --model NAME (as the server names it), backend.model in "
            f"config.yaml, or {MODEL_ENV}"
        )
    key = None
    if b.api_key_env:
        key = os.environ.get(b.api_key_env)
        if not key:
            raise ConfigError(f"backend.api_key_env names {b.api_key_env}, which is not set")
    tools: ReadOnlyTools | None = None
    if b.mcp_config is not None:
        try:
            tools = await ReadOnlyTools.start(b.mcp_config, b.allowed_tools)
        except (EvidenceToolsError, ToolServerError) as exc:
            raise ConfigError(str(exc)) from None
    openai = OpenAICompleter(
        model=model,
        base_url=b.base_url,
        api_key=key,
        executor=tools,
        timeout=b.timeout_seconds,
        json_mode=b.json_mode,
        json_schema=b.json_schema,
    )
    try:
        await openai.check()
        wrapped = CallableBackend(openai.complete)
        wrapped.tools = openai.tools
        yield Backend(wrapped, f"openai {model} at {b.base_url}")
    finally:
        await openai.close()
        if tools is not None:
            await tools.close()
