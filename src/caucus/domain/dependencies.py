"""Task dependencies (issue 34): a task may wait on others, and is ready when they are done.

A dependent is stored blocked and its item is not sent until every task it waits on has
completed; then it is released to its worker like any task. When one it waits on fails, is
canceled or expires, the poster's choice applies: `cancel` (the default) cancels the
dependent too, and so on down the graph; `proceed` treats that ending as done. Edges are only
ever added to a blocked task, and never where they would close a cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum

from caucus.domain.tasks import TaskState

PRIORITIES = range(5)  # 0 most urgent … 4 least (beads' scale)
DEFAULT_PRIORITY = 2
MAX_BLOCKED_BY = 20
MAX_GRAPH = 1_000  # tasks a cycle check walks at most

_ENDED_BADLY = frozenset({TaskState.FAILED, TaskState.CANCELED, TaskState.EXPIRED})


class OnFailure(StrEnum):
    CANCEL = "cancel"  # a dependency that fails cancels the dependent
    PROCEED = "proceed"  # a dependency that ends at all counts as done


def met(state: TaskState, on_failure: OnFailure) -> bool:
    """Whether a dependency in `state` no longer holds its dependent back."""
    if state is TaskState.COMPLETED:
        return True
    return on_failure is OnFailure.PROCEED and state in _ENDED_BADLY


def dooms(state: TaskState, on_failure: OnFailure) -> bool:
    """Whether a dependency in `state` cancels its dependent."""
    return on_failure is OnFailure.CANCEL and state in _ENDED_BADLY


def cycle(task_id: str, adding: Iterable[str], waits_on: Callable[[str], list[str]]) -> list[str]:
    """The path by which `task_id` would wait on itself if it waited on `adding` (empty: none).
    `waits_on` reads what a task waits on; at most MAX_GRAPH tasks are walked."""
    seen: set[str] = set()
    stack: list[tuple[str, list[str]]] = [(d, [task_id, d]) for d in adding]
    while stack:
        current, path = stack.pop()
        if current == task_id:
            return path
        if current in seen or len(seen) >= MAX_GRAPH:
            continue
        seen.add(current)
        stack.extend((nxt, [*path, nxt]) for nxt in waits_on(current))
    return []
