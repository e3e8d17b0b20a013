"""The agent's standard streams: input lines from stdin, one NDJSON event per line on stdout,
and logs as NDJSON on stderr (so stdout stays machine-readable)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import time
from collections.abc import AsyncIterator
from typing import Any, TextIO

MAX_LINE = 1024 * 1024  # one input line, at most

log = logging.getLogger(__name__)


async def stdin_lines() -> AsyncIterator[str]:
    """Lines of stdin as they come, read on the event loop where stdin is a pipe or a
    terminal, in a worker thread where it is a file. A line past MAX_LINE is skipped, with a
    warning."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    try:
        pipe = os.fdopen(os.dup(0), "rb", 0)
        mode = os.fstat(pipe.fileno()).st_mode
    except OSError:
        return  # no stdin at all: no input
    # The loop can watch a pipe, a socket or a terminal; not a file or /dev/null.
    watchable = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(pipe.fileno())
    try:
        if not watchable:
            raise ValueError("not a pipe")
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    except (ValueError, OSError):  # read it in a worker thread instead
        try:
            while line := await asyncio.to_thread(pipe.readline, MAX_LINE + 1):
                if len(line) > MAX_LINE:
                    log.warning("an input line longer than %d bytes was skipped", MAX_LINE)
                    continue
                yield line.decode("utf-8", errors="replace")
        finally:
            pipe.close()
        return
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # longer than the limit: the reader dropped it
            log.warning("an input line longer than %d bytes was skipped", MAX_LINE)
            continue
        if not line:
            return
        yield line.decode("utf-8", errors="replace")


class EventWriter:
    """One JSON object per line on `out`, flushed at once (a reader follows it live)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out or sys.stdout

    def __call__(self, event: dict[str, Any]) -> None:
        self._out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._out.flush()


class JsonLogFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created if record.created else time.time(), 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def log_to_stderr(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "mcp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
