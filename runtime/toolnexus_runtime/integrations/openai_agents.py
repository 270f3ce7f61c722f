"""The OpenAI Agents SDK: `FunctionTool`s with the checked-in schema."""

from __future__ import annotations

import copy
from typing import Any

from ..core import ToolContext, ToolkitCore
from ._common import SOURCE, definitions


def openai_agents_tools(toolkit: ToolkitCore[Any], *, toolset: str | None = None) -> list[Any]:
    """A list of Agents SDK `FunctionTool`s: `Agent(name, tools=openai_agents_tools(tk))`
    (`toolset=`: only that toolset's tools).

    The schema goes exactly as generated (not rewritten by the SDK's strict conversion);
    `strict_json_schema` is the spec's `strict`. An error result is returned to the model as its
    text, which is how the Agents SDK lets a model correct a call."""
    from agents import FunctionTool

    def invoker(name: str) -> Any:
        async def on_invoke_tool(ctx: Any, arguments: str) -> str:
            tool, args = toolkit.unalias(SOURCE, name, arguments)
            context = ToolContext(
                call_id=getattr(ctx, "tool_call_id", None), tool_name=tool, provider="openai_agents"
            )
            result = await toolkit.execute(tool, args, context, offload=True)
            return result.output

        return on_invoke_tool

    tools = []
    for d in definitions(toolkit, toolset):
        tool = FunctionTool(
            name=d["name"],
            description=d["description"],
            params_json_schema=d["parameters"],
            on_invoke_tool=invoker(d["name"]),
            strict_json_schema=d["strict"],
        )
        # A strict tool's schema is rewritten on construction (ensure_strict_json_schema drops
        # `default: null`, ...); the checked-in one already passed the strict rules at build
        # time, so it goes exactly as checked in.
        tool.params_json_schema = copy.deepcopy(d["parameters"])
        tools.append(tool)
    return tools
