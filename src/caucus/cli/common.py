"""What every command shares: the error console, and failing with a hint."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

import typer
from rich.console import Console

T = TypeVar("T")

err = Console(stderr=True, soft_wrap=True, highlight=False)


def _fail(message: str, hint: str | None = None) -> None:
    err.print(f"[bold red]error:[/] {message}")
    if hint:
        err.print(f"[dim]{hint}[/]")
    raise typer.Exit(2)


def _run_loop(main: Coroutine[Any, Any, T]) -> T:
    import asyncio

    try:
        import uvloop
    except ImportError:  # uvloop is optional (not on Windows)
        return asyncio.run(main)
    return uvloop.run(main)
