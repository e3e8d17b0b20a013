"""Coverage-guided fuzzing (atheris, libFuzzer) of the parsers that meet untrusted bytes
first, beside the property tests of tests/unit/test_fuzz.py: hypothesis generates what we
thought of, libFuzzer follows the branches it has not reached yet.

    python -m tests.fuzz.atheris_targets TARGET -runs=N [libFuzzer flags]

Targets: body (the one JSON body reader), ledger (the ledger line parser), mcp-args (MCP
argument decoding into every tool's argument model), lines (the bridge's stdin line reader).
Each input must be answered with a value or the parser's own refusal; anything else raises,
and libFuzzer reports the input and exits non-zero.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable
from typing import Any

import atheris
from pydantic import BaseModel, ValidationError

# Only the hub's own code is instrumented: instrumenting every library it imports takes
# minutes, and their branches are not what is being explored.
with atheris.instrument_imports(include=["caucus"]):
    from caucus.errors import CaucusError
    from caucus.ledger.verify import parse_line
    from caucus.mcp import args as mcp_args
    from caucus.mcp.bridge import _Lines
    from caucus.web.body import parse_json

ARG_MODELS = [
    m
    for m in vars(mcp_args).values()
    if isinstance(m, type) and issubclass(m, BaseModel) and m is not BaseModel
]


def body(data: bytes) -> None:
    try:
        value = parse_json(data)
    except CaucusError as exc:
        refusal = exc
    else:
        # What it keeps can be written out again as UTF-8 JSON: no stored value breaks a read.
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
        return
    if refusal.status not in (400, 422) or not refusal.detail:
        raise AssertionError(f"an unexpected refusal: {refusal!r}")


def ledger(data: bytes) -> None:
    outcome = parse_line(data)
    if isinstance(outcome, str):
        assert outcome in {"invalid encoding", "duplicate key", "malformed record"}, outcome
    else:
        assert isinstance(outcome, dict)


def mcp_arguments(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    model = ARG_MODELS[fdp.ConsumeIntInRange(0, len(ARG_MODELS) - 1)]
    try:
        value: Any = parse_json(fdp.ConsumeBytes(fdp.remaining_bytes()))
    except CaucusError:
        return
    if isinstance(value, dict):
        with contextlib.suppress(ValidationError, CaucusError):
            model.model_validate(value)


def lines(data: bytes) -> None:
    async def read() -> list[str]:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        return [line async for line in _Lines(reader)]

    got = asyncio.run(read())
    assert len(got) == data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "body": body,
    "ledger": ledger,
    "mcp-args": mcp_arguments,
    "lines": lines,
}


def main() -> None:
    target = TARGETS[sys.argv[1]]
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
