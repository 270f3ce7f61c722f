"""pydantic-ai: the toolkit as a toolset (`Agent(model, toolsets=[...])`)."""

from __future__ import annotations

from typing import Any

from ..core import ToolContext, ToolkitCore
from ._common import SOURCE, definitions


def pydantic_ai_toolset(
    toolkit: ToolkitCore[Any],
    *,
    max_retries: int = 2,
    toolset_id: str | None = None,
    toolset: str | None = None,
) -> Any:
    """A pydantic-ai toolset: `Agent(model, toolsets=[pydantic_ai_toolset(tk)])` (`toolset=`:
    only that toolset's tools).

    A call with invalid arguments (or one whose handler fails) is answered with pydantic-ai's
    retry prompt carrying the toolkit's message, up to `max_retries` times per tool."""
    from pydantic_ai import ModelRetry
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
    from pydantic_core import SchemaValidator, core_schema

    chosen = definitions(toolkit, toolset)
    # The toolkit validates with the generated model; pydantic-ai only parses the JSON object.
    passthrough = SchemaValidator(core_schema.dict_schema())

    class GeneratedToolset(AbstractToolset[Any]):  # type: ignore[misc, unused-ignore]
        @property
        def id(self) -> str | None:
            return toolset_id

        async def get_tools(self, ctx: Any) -> dict[str, Any]:
            return {
                d["name"]: ToolsetTool(
                    toolset=self,
                    tool_def=ToolDefinition(
                        name=d["name"],
                        description=d["description"],
                        parameters_json_schema=d["parameters"],
                        # False, not None: with None pydantic-ai decides itself and rewrites a
                        # schema it finds strict-compatible into OpenAI's strict form.
                        strict=d["strict"],
                    ),
                    max_retries=max_retries,
                    args_validator=passthrough,
                )
                for d in chosen
            }

        async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
            name, tool_args = toolkit.unalias(SOURCE, name, tool_args)
            context = ToolContext(
                call_id=getattr(ctx, "tool_call_id", None), tool_name=name, provider="pydantic_ai"
            )
            result = await toolkit.execute(name, tool_args, context, offload=True)
            if result.is_error:
                raise ModelRetry(result.output)
            return result.data if result.data is not None else result.output

    return GeneratedToolset()
