"""LangChain / LangGraph: tools for `ToolNode`, `bind_tools` or any agent."""

from __future__ import annotations

import contextvars
from typing import Any

from ..core import ToolContext, ToolkitCore
from ._common import SOURCE, definitions

_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "toolnexus_call_id", default=None
)


def langchain_tools(toolkit: ToolkitCore[Any], *, toolset: str | None = None) -> list[Any]:
    """A list of LangChain tools, for LangGraph's `ToolNode`, `bind_tools` or any agent
    (`toolset=`: only that toolset's tools).

    Invoked with a model's ToolCall, each answers with a `ToolMessage` carrying the call id; an
    error result is a `ToolMessage` with `status="error"` and the toolkit's message. Every
    argument reaches the handler, one named like LangChain's own `run_manager` or `callbacks`
    included. Each tool carries its checked-in `strict` in `extras` and `metadata`
    (`tool.extras["strict"]`). LangChain's own conversion (`convert_to_openai_tool`, used by
    `bind_tools`) sends no per-tool `strict` and rewrites the schema; to send both exactly as
    checked in, bind `langchain_tool_schemas(toolkit)` and run the calls with these tools."""
    from langchain_core.tools import BaseTool, ToolException

    class GeneratedTool(BaseTool):  # type: ignore[misc, unused-ignore]
        args_schema: Any = None
        handle_tool_error: Any = True

        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            token = _CALL_ID.set(_call_id(input))
            try:
                return super().invoke(input, config, **kwargs)
            finally:
                _CALL_ID.reset(token)

        async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            token = _CALL_ID.set(_call_id(input))
            try:
                return await super().ainvoke(input, config, **kwargs)
            finally:
                _CALL_ID.reset(token)

        def _call(self, arguments: Any) -> tuple[str, Any, ToolContext]:
            tool, args = toolkit.unalias(SOURCE, self.name, arguments)
            return tool, args, ToolContext(_CALL_ID.get(), tool, "langchain")

        # No `run_manager` (or config) parameter: LangChain passes those only to methods that
        # name them, so a tool property of that name arrives here as an argument.
        def _run(self, **arguments: Any) -> str:
            result = toolkit.execute_sync(*self._call(arguments))
            if result.is_error:
                raise ToolException(result.output)
            return result.output

        async def _arun(self, **arguments: Any) -> str:
            result = await toolkit.execute(*self._call(arguments), offload=True)
            if result.is_error:
                raise ToolException(result.output)
            return result.output

    return [
        GeneratedTool(
            name=d["name"],
            description=d["description"],
            args_schema=d["parameters"],
            # LangChain's place for a tool definition's provider fields (an integration that
            # carries per-tool fields reads them here), and what callbacks and tracers see.
            extras={"strict": d["strict"]},
            metadata={"strict": d["strict"]},
        )
        for d in definitions(toolkit, toolset)
    ]


def langchain_tool_schemas(
    toolkit: ToolkitCore[Any], *, toolset: str | None = None
) -> list[dict[str, Any]]:
    """The tools in the OpenAI function-tool shape, for `model.bind_tools(...)`: LangChain
    passes such a dict through unchanged, so the model gets the checked-in schema with its
    `strict` flag (a LangChain tool object carries no `strict`, and its schema is rewritten:
    `$ref`s inlined, titles dropped). Run the calls with `ToolNode(langchain_tools(toolkit))`."""
    return [
        {
            "type": "function",
            "function": {
                "name": d["name"],
                "description": d["description"],
                "parameters": d["parameters"],
                "strict": d["strict"],
            },
        }
        for d in definitions(toolkit, toolset)
    ]


def _call_id(value: Any) -> str | None:
    if isinstance(value, dict) and value.get("type") == "tool_call":
        call_id = value.get("id")
        return None if call_id is None else str(call_id)
    return None
