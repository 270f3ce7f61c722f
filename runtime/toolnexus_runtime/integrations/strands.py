"""Strands Agents: tools whose `tool_spec` is the checked-in Bedrock `toolSpec`."""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any

from ..core import ToolContext, ToolkitCore
from ..datatypes import RawCall
from ..providers.bedrock import Bedrock
from ._common import declarations

TARGET = "bedrock"


def strands_tools(toolkit: ToolkitCore[Any], *, toolset: str | None = None) -> list[Any]:
    """A list of Strands `AgentTool`s: `Agent(tools=strands_tools(tk))` (`toolset=`: only that
    toolset's tools).

    Each `tool_spec` is the checked-in `schemas/bedrock.json` `toolSpec` (Strands normalises a
    spec before sending it: a property without a description gets `Property <name>`, a schema
    without `properties` or `required` gets empty ones; nothing else changes). The call's
    `toolUseId` reaches `ToolContext.call_id`, and Strands' `invocation_state` is
    `ctx.user["invocation_state"]`. The answer is a Strands `ToolResult` in Bedrock's form: a
    `json` block for a structured result, `image` blocks for images, text otherwise, and
    `status="error"` with the toolkit's message for an error result, which the model reads
    and can correct."""
    from strands.types._events import ToolResultEvent  # what Strands' own tools yield
    from strands.types.tools import AgentTool

    class GeneratedTool(AgentTool):  # type: ignore[misc, unused-ignore]
        def __init__(self, spec: dict[str, Any]) -> None:
            super().__init__()
            self.spec = spec

        @property
        def tool_name(self) -> str:
            return str(self.spec["name"])

        @property
        def tool_spec(self) -> Any:
            return copy.deepcopy(self.spec)

        @property
        def tool_type(self) -> str:
            return "toolnexus"

        async def stream(
            self, tool_use: Any, invocation_state: dict[str, Any], **kwargs: Any
        ) -> Any:
            name, arguments = toolkit.unalias(TARGET, self.tool_name, tool_use.get("input") or {})
            call_id = tool_use.get("toolUseId")
            context = ToolContext(
                call_id=call_id,
                tool_name=name,
                provider="strands",
                user=MappingProxyType({"invocation_state": invocation_state}),
            )
            result = await toolkit.execute(name, arguments, context, offload=True)
            (reply,) = Bedrock.replies([RawCall(name, arguments, call_id)], [result])
            yield ToolResultEvent(reply["toolResult"])

    return [GeneratedTool(spec) for spec in declarations(toolkit, TARGET, toolset)]
