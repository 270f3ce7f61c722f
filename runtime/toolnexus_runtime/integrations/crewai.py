"""CrewAI: `BaseTool`s whose `args_schema` is the generated argument model."""

from __future__ import annotations

from typing import Any

from ..core import ToolContext, ToolkitCore
from ._common import models, text


def crewai_tools(toolkit: ToolkitCore[Any], *, toolset: str | None = None) -> list[Any]:
    """A list of CrewAI tools: `Agent(..., tools=crewai_tools(tk))` (`toolset=`: only that
    toolset's tools).

    Each tool's `args_schema` is the generated argument model (its field descriptions, enums
    and nullable fields as generated); CrewAI builds the schema it sends from it, by its own
    rules (every tool strict, every property required). The arguments go to `Toolkit.execute`
    as the model sent them (not CrewAI's `model_dump()` of them), so the toolkit validates
    them once; an error result comes back as CrewAI's `ToolFailure` (reason `invalid_input`
    for bad arguments), which CrewAI reports and gives the model as the tool's answer, so it
    can correct the call (under CrewAI's default `tool_failure_policy`). A structured result
    reaches the model as JSON text; images as their description (CrewAI carries text)."""
    from crewai.tools import BaseTool
    from crewai.tools.tool_failure import ToolFailure, ToolFailureReason

    def answer(result: Any) -> Any:
        if not result.is_error:
            return text(result)
        reason = (
            ToolFailureReason.INVALID_INPUT
            if result.error_type == "invalid_arguments"
            else ToolFailureReason.TOOL_REPORTED
        )
        return ToolFailure(message=result.output, reason=reason, retryable=True)

    class GeneratedTool(BaseTool):  # type: ignore[misc, unused-ignore]
        def _validate_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
            return kwargs  # the toolkit validates (once, with its own messages)

        spec_name: str

        def _run(self, **arguments: Any) -> Any:
            context = ToolContext(tool_name=self.spec_name, provider="crewai")
            return answer(toolkit.execute_sync(self.spec_name, arguments, context))

        async def _arun(self, **arguments: Any) -> Any:
            context = ToolContext(tool_name=self.spec_name, provider="crewai")
            result = await toolkit.execute(self.spec_name, arguments, context, offload=True)
            return answer(result)

    return [
        GeneratedTool(
            name=d["name"], description=d["description"], args_schema=model, spec_name=name
        )
        for d, name, model in models(toolkit, toolset)
    ]
