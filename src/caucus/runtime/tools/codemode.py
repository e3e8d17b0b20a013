"""Code mode (`caucus agent --code-mode`): the model gets one tool, `run_code`, and writes Python
against its tools instead of calling them one at a time.

The code runs in the `pydantic-monty` sandbox — a pool of worker subprocesses with a heap cap
and a time limit per run, no files, no network, no imports beyond its own small library — with
every tool as an async function (`await get_sum(a=2, b=3)`), documented to the model by stubs
generated from the tools' input and output schemas. One run_code round can fan out many calls
(`asyncio.gather`) and return only what matters. Every call goes through one path: its keyword
arguments checked against the tool's schema, the run's call budget counted, an audit record
kept, and a warning when the tool mutates. The REPL state (variables, functions) lives for one
agent run (`run_scope`), so a second run_code in the same turn builds on the first. Helpers are
predefined: `items`, `names`, `dig`, `count_by`, `to_json`.
"""

from __future__ import annotations

import contextlib
import json
import keyword
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_monty import AsyncMonty, AsyncMontySession, CollectString, MontyError, ResourceLimits

from caucus.models.tools import ToolExecutor, ToolResult, ToolSpec

log = logging.getLogger(__name__)

TIME_LIMIT = 10.0  # seconds of sandboxed execution per run_code
MEMORY_LIMIT = 64 * 1024 * 1024  # bytes of sandbox heap
CALL_BUDGET = 50  # tool calls per run_code
OUTPUT_MAX = 20_000  # characters of result and printed output returned to the model
_LIMIT = re.compile(r"> (\d+) bytes")  # the limit a sandbox's "memory limit" error names

HELPERS = '''
def items(value):
    """A result's list: the value itself, or the first list among a dict's values."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for v in value.values():
            if isinstance(v, list):
                return v
    return []


def names(value, key="name"):
    """Every item's `key`."""
    return [x.get(key) for x in items(value) if isinstance(x, dict)]


def dig(value, *path, default=None):
    """value[a][b]... with dict keys and list indexes, or `default` where a step is missing."""
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return default
    return value


def count_by(values, key):
    """How many items have each value of `key`."""
    counts = {}
    for x in items(values):
        k = x.get(key) if isinstance(x, dict) else None
        counts[k] = counts.get(k, 0) + 1
    return counts


def to_json(value):
    import json
    return json.dumps(value)
'''

RUN_CODE = """Run Python (a sandboxed subset: no files, network or imports but json, asyncio and re)
with your tools as async functions. Await them; `asyncio.gather` runs several at once. The value
of the last expression is returned (filter it to what you need), with what you printed and an
audit of every call. Variables stay for the rest of this turn. Helpers: items(v), names(v, key),
dig(v, *path, default), count_by(v, key), to_json(v). At most {budget} tool calls, {seconds:g} s
and {megabytes} MB per run.

The tools:

{stubs}"""

_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
    "null": "None",
}


def py_name(name: str) -> str:
    """A tool's name as a Python identifier (`get-sum` -> `get_sum`)."""
    safe = re.sub(r"\W", "_", name)
    if not safe or safe[0].isdigit() or keyword.iskeyword(safe):
        safe = "t_" + safe
    return safe


def _type(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "Any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_TYPES.get(str(k), "Any") for k in kind)
    if "enum" in schema:
        return "str"
    return _TYPES.get(str(kind), "Any")


def _sketch(schema: dict[str, Any] | None) -> str | None:
    """A short picture of what a tool returns, from its output schema."""
    if not schema:
        return None
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return _type(schema)
    parts = []
    for key, sub in list(props.items())[:8]:
        inner = _type(sub)
        if isinstance(sub, dict) and sub.get("type") == "array":
            item = sub.get("items")
            if isinstance(item, dict) and isinstance(item.get("properties"), dict):
                keys = ", ".join(list(item["properties"])[:6])
                inner = f"list[{{{keys}}}]"
        parts.append(f"{key}: {inner}")
    more = ", ..." if len(props) > 8 else ""
    return "{" + ", ".join(parts) + more + "}"


def stub(tool: ToolSpec) -> str:
    params = tool.parameters.get("properties", {}) if isinstance(tool.parameters, dict) else {}
    required = (
        set(tool.parameters.get("required", [])) if isinstance(tool.parameters, dict) else set()
    )
    args = []
    for key, sub in params.items() if isinstance(params, dict) else []:
        hint = _type(sub)
        args.append(f"{key}: {hint}" if key in required else f"{key}: {hint} | None = None")
    signature = ", ".join(["*", *args]) if args else ""
    doc = tool.description.strip().splitlines()[0] if tool.description.strip() else tool.name
    sketch = _sketch(tool.output)
    if sketch:
        doc += f" Returns: {sketch}."
    if tool.destructive:
        doc += " Changes things."
    return f'async def {py_name(tool.name)}({signature}) -> Any:\n    """{doc}"""'


@dataclass(slots=True)
class Audit:
    calls: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class CodeModeTools:
    def __init__(
        self,
        inner: ToolExecutor,
        *,
        time_limit: float = TIME_LIMIT,
        memory_limit: int = MEMORY_LIMIT,
        call_budget: int = CALL_BUDGET,
        workers: int = 2,
    ) -> None:
        self._inner = inner
        self._limits = ResourceLimits(max_feed_duration_secs=time_limit, max_memory=memory_limit)
        self._time_limit = time_limit
        self._memory_limit = memory_limit
        self._budget = call_budget
        self._pool = AsyncMonty(min_processes=1, max_processes=workers)
        self._session: AsyncMontySession | None = None
        self._tools: dict[str, ToolSpec] = {}
        self.audits: list[Audit] = []  # every run_code's, in order

    async def open(self) -> None:
        await self._pool.__aenter__()

    async def close(self) -> None:
        await self._pool.__aexit__(None, None, None)

    async def list_tools(self) -> list[ToolSpec]:
        tools = await self._inner.list_tools()
        self._tools = {py_name(t.name): t for t in tools}
        description = RUN_CODE.format(
            budget=self._budget,
            seconds=self._time_limit,
            megabytes=self._memory_limit // (1024 * 1024),
            stubs="\n\n".join(stub(t) for t in tools) or "(none)",
        )
        code = {"type": "string", "description": "the Python to run"}
        schema = {"type": "object", "properties": {"code": code}, "required": ["code"]}
        return [ToolSpec("run_code", description, schema)]

    @contextlib.asynccontextmanager
    async def run_scope(self) -> AsyncIterator[None]:
        """One REPL session for the agent's run: what run_code defines stays until it ends."""
        async with self._inner.run_scope(), self._pool.checkout(limits=self._limits) as session:
            await session.feed_run(HELPERS)
            self._session = session
            try:
                yield
            finally:
                self._session = None

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name != "run_code":
            return ToolResult(f"in code mode the one tool is run_code, not {name!r}", is_error=True)
        code = arguments.get("code")
        if not isinstance(code, str) or not code.strip():
            return ToolResult("run_code needs code: the Python to run", is_error=True)
        if self._session is None:  # called outside a run: a session of its own
            async with self.run_scope():
                return await self._run(code)
        return await self._run(code)

    async def _run(self, code: str) -> ToolResult:
        assert self._session is not None
        audit = Audit()
        self.audits.append(audit)
        printed = CollectString(max_bytes=OUTPUT_MAX)
        lookup = {alias: self._bound(alias, tool, audit) for alias, tool in self._tools.items()}
        try:
            value = await self._session.feed_run(
                code, external_lookup=lookup, print_callback=printed
            )
        except MontyError as exc:
            error = self._explain(exc, len(printed.output.encode()))
            return self._answer(None, printed.output, audit, error=error)
        return self._answer(value, printed.output, audit)

    def _bound(self, alias: str, tool: ToolSpec, audit: Audit) -> Callable[..., Awaitable[Any]]:
        async def call_tool(**kwargs: Any) -> Any:
            problem = _check(tool, kwargs)
            if problem is None and len(audit.calls) >= self._budget:
                problem = f"the call budget of {self._budget} tool calls per run is spent"
            record: dict[str, Any] = {"tool": tool.name, "arguments": kwargs}
            audit.calls.append(record)
            if problem is not None:
                record.update(ok=False, error=problem)
                raise ValueError(f"{alias}: {problem}")
            if tool.destructive:
                audit.warnings.append(f"{tool.name} changes things (it was called)")
            began = time.monotonic()
            result = await self._inner.call(tool.name, kwargs)
            record.update(ok=not result.is_error, seconds=round(time.monotonic() - began, 3))
            if result.is_error:
                record["error"] = result.content[:500]
                raise RuntimeError(f"{alias} failed: {result.content}")
            if result.data is not None:
                return result.data
            try:
                return json.loads(result.content)
            except ValueError:
                return result.content

        return call_tool

    def _explain(self, exc: MontyError, printed: int) -> str:
        """The sandbox's error in one clear line, naming the limit it hit in its own words
        (what a run may print, its heap, its time) and what to do about it."""
        text = str(exc)
        if "time limit" in text:
            return (
                f"TimeoutError: the code ran past {self._time_limit:g} s, the limit per run: "
                "do less per run"
            )
        if "memory limit" in text:
            limit = _LIMIT.search(text)
            if (limit and int(limit[1]) == OUTPUT_MAX) or printed >= OUTPUT_MAX // 2:
                return (
                    f"OutputLimit: the code printed more than {OUTPUT_MAX:,} bytes, what a run "
                    "may print: print less, and return only what you need"
                )
            return (
                f"MemoryError: the code's data grew past {self._memory_limit // 2**20} MB, the "
                "sandbox's heap: keep less in memory at once"
            )
        if text.startswith(("PermissionError", "ModuleNotFoundError")):
            return f"{text} (the sandbox has no files, network or imports: use your tools)"
        return text

    def _answer(
        self, value: Any, printed: str, audit: Audit, error: str | None = None
    ) -> ToolResult:
        body: dict[str, Any] = {"result": value} if error is None else {"error": error}
        if printed:
            body["printed"] = printed[-OUTPUT_MAX:]
        body["calls"] = audit.calls
        if audit.warnings:
            body["warnings"] = audit.warnings
        text = json.dumps(body, ensure_ascii=False, default=repr)
        if len(text) > OUTPUT_MAX:
            text = text[:OUTPUT_MAX] + "… (cut: return less)"
        return ToolResult(text, is_error=error is not None, data=body if error is None else None)


def _check(tool: ToolSpec, kwargs: dict[str, Any]) -> str | None:
    """The keyword arguments against the tool's input schema: what is wrong, or None."""
    schema = tool.parameters if isinstance(tool.parameters, dict) else {}
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        unknown = sorted(set(kwargs) - set(props))
        if unknown and schema.get("additionalProperties") is not True:
            return f"unknown argument(s) {', '.join(unknown)}; it takes {', '.join(props)}"
    missing = [k for k in schema.get("required", []) if k not in kwargs]
    if missing:
        return f"missing argument(s) {', '.join(missing)}"
    for key, value in kwargs.items():
        expected = props.get(key) if isinstance(props, dict) else None
        kind = expected.get("type") if isinstance(expected, dict) else None
        if isinstance(kind, str) and not _fits(value, kind):
            return f"{key} should be {_TYPES.get(kind, kind)}, not {type(value).__name__}"
    return None


def _fits(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    checks: dict[str, type | tuple[type, ...]] = {
        "string": str,
        "boolean": bool,
        "array": list,
        "object": dict,
    }
    wanted = checks.get(kind)
    return wanted is None or isinstance(value, wanted)
