"""The one tool loop, above every model (`Model.complete`, one answer per call).

A run is bounded: the tools are listed at its start; each answer that calls tools is followed
by their results (`role: tool`; a tool's failure goes back to the model as error text, never
ends the run); at most MAX_TOOL_ROUNDS rounds. The request after the last round withdraws the
tools and says so in a *user* message (chat templates such as llama.cpp's refuse a system
message after the first), and a tool call in that answer is a backend error.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from caucus.models.chat import ChatMessage, ToolCall, assistant, tool_result, user
from caucus.models.seam import BackendError, Completion, MessageSink, Model, RunOutcome
from caucus.models.tools import ToolExecutor, ToolObserver, ToolResult

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 8
BUDGET_NOTE = (
    "Tool budget exhausted: you cannot call any more tools in this turn. Answer now with what "
    "you have found so far."
)


class ToolLoop:
    """An `AgentBackend` over `model`. `start_with_tool`: the very first request of the
    backend's life must call that tool (forced tool choice), for an agent that has to act as
    it starts, on a model that might not otherwise."""

    def __init__(self, model: Model, *, start_with_tool: str | None = None) -> None:
        self.model = model
        self._start_tool = start_with_tool

    async def close(self) -> None:
        await self.model.close()

    async def run(
        self,
        history: Sequence[ChatMessage],
        sink: MessageSink,
        tools: ToolExecutor,
        observer: ToolObserver | None = None,
        *,
        answer_schema: Mapping[str, Any] | None = None,
    ) -> RunOutcome:
        offered = await tools.list_tools()
        said = list(history)
        rounds = 0
        while True:
            spent = bool(offered) and rounds >= MAX_TOOL_ROUNDS
            if spent:
                said.append(user(BUDGET_NOTE))
            usable = [] if spent else offered
            forced, self._start_tool = self._start_tool, None
            if forced is not None and forced not in {t.name for t in usable}:
                log.warning("--start-with-tool %s: no such tool is offered", forced)
                forced = None
            turn = await self.model.complete(Completion(said, usable, forced, answer_schema))
            if not turn.calls:
                await sink.put(assistant(turn.content))
                return RunOutcome(turn.content)
            if spent:
                raise BackendError(
                    f"the model called {turn.calls[0].name!r} after its {MAX_TOOL_ROUNDS} tool "
                    "rounds were spent"
                )
            asked = assistant(turn.content, turn.calls)
            await sink.put(asked)
            said.append(asked)
            for call in turn.calls:
                answer = tool_result(call, await _call(tools, call, observer))
                await sink.put(answer)
                said.append(answer)
            rounds += 1


async def _call(tools: ToolExecutor, call: ToolCall, observer: ToolObserver | None) -> str:
    if observer is not None:
        observer.called(call)
    if "__invalid_arguments__" in call.arguments:
        result = ToolResult(
            f"the arguments were not valid JSON: {call.arguments['__invalid_arguments__']}",
            is_error=True,
        )
    else:
        try:
            result = await tools.call(call.name, call.arguments)
        except Exception as exc:  # the executor broke: the model hears it as an error
            result = ToolResult(f"{type(exc).__name__}: {exc}", is_error=True)
    if observer is not None:
        observer.answered(call, result)
    return f"Error: {result.content}" if result.is_error else result.content
