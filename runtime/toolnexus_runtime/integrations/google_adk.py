"""Google ADK: tools whose declarations are the checked-in Gemini declarations, and the toolkit
as an ADK toolset (`BaseToolset`), filtered per agent."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from ..core import ToolContext, ToolkitCore
from ._common import declarations, images

TARGET = "gemini"


def google_adk_tools(toolkit: ToolkitCore[Any], *, toolset: str | None = None) -> list[Any]:
    """A list of ADK tools: `LlmAgent(..., tools=google_adk_tools(tk))` (`toolset=`: only that
    toolset's tools).

    Each declares itself with the checked-in `schemas/gemini.json` declaration (as a
    `types.FunctionDeclaration`) and runs through `Toolkit.execute`. The handler's
    `ToolContext` has ADK's function call id as `call_id`, and in `user` the `invocation_id`,
    the session `state` (writes to it are saved as ADK state deltas) and ADK's own
    `tool_context`. A result answers as `{"output": ...}` (the structured value when there is
    one), with images as the function response's parts; an error as `{"error": message}`,
    which the model reads and can correct (ADK ends the run on an exception, so none is
    raised)."""
    from google.adk.tools.base_tool import BaseTool
    from google.genai import types

    class GeneratedTool(BaseTool):  # type: ignore[misc, unused-ignore]
        def __init__(self, declaration: dict[str, Any]) -> None:
            super().__init__(
                name=declaration["name"], description=declaration.get("description", "")
            )
            self.declared = declaration["name"]
            self.declaration = types.FunctionDeclaration.model_validate(declaration)

        def _get_declaration(self) -> Any:
            # The name as the agent sees it (a toolset's tool_name_prefix renames a copy).
            return self.declaration.model_copy(update={"name": self.name})

        async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
            name, arguments = toolkit.unalias(TARGET, self.declared, args)
            user = {
                "invocation_id": tool_context.invocation_id,
                "state": tool_context.state,
                "tool_context": tool_context,
            }
            context = ToolContext(
                call_id=tool_context.function_call_id,
                tool_name=name,
                provider="google_adk",
                user=MappingProxyType(user),
            )
            result = await toolkit.execute(name, arguments, context, offload=True)
            if result.is_error:
                return {"error": result.output}
            output = result.data if result.data is not None else result.output
            media = [
                types.Part.from_bytes(data=data, mime_type=mime) for mime, data in images(result)
            ]
            # ADK moves the parts into the function response's `parts` (media the model sees).
            return {"output": output, "media": media} if media else {"output": output}

    return [GeneratedTool(d) for d in declarations(toolkit, TARGET, toolset)]


def google_adk_toolset(
    toolkit: ToolkitCore[Any],
    *,
    toolset: str | None = None,
    tool_filter: Any = None,
    tool_name_prefix: str | None = None,
) -> Any:
    """The toolkit as an ADK toolset (`BaseToolset`): `LlmAgent(..., tools=[google_adk_toolset(
    tk, toolset="read")])`, so each agent can be given its own toolset of the same toolkit.
    `tool_filter` (tool names, or ADK's predicate) and `tool_name_prefix` work as in any ADK
    toolset; the tools are those of `google_adk_tools`."""
    from google.adk.tools.base_toolset import BaseToolset

    tools = google_adk_tools(toolkit, toolset=toolset)

    class GeneratedToolset(BaseToolset):  # type: ignore[misc, unused-ignore]
        async def get_tools(self, readonly_context: Any = None) -> list[Any]:
            return [t for t in tools if self._is_tool_selected(t, readonly_context)]

    return GeneratedToolset(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
