"""A generated Toolkit inside the agent frameworks teams run: pydantic-ai, the OpenAI Agents SDK
and LangChain / LangGraph. Each framework is imported only when its function is called.

In each, the framework sends the model exactly the checked-in schema (descriptions, enums and
`strict` as generated), every call goes through `Toolkit.execute` (validated by the generated
model, traced when the toolkit is instrumented), the provider's call id reaches
`ToolContext.call_id`, and an error result reaches the model in the framework's own correctable
form: a retry prompt (pydantic-ai `ModelRetry`), an error string (Agents SDK), a `ToolMessage`
with `status="error"` (LangChain).
"""

from __future__ import annotations

import contextvars
import copy
from typing import Any

from .core import ToolContext, ToolkitCore
from .toolsets import subset

SOURCE = "openai_responses"  # the provider file whose tool definitions the frameworks get


def _definitions(toolkit: ToolkitCore[Any], toolset: str | None = None) -> list[dict[str, Any]]:
    """Each tool as the OpenAI Responses file has it: name, description, parameters, strict
    (the neutral JSON Schema form, with the strict flag the spec chose); only a toolset's when
    one is named."""
    chosen = toolkit._tool_subset(None, toolset)
    try:
        tools = toolkit._provider_schema(SOURCE)
        if chosen is not None:
            sent = toolkit.sent_names(SOURCE)
            tools = subset(SOURCE, tools, {sent.get(n, n) for n in chosen})
    except NotImplementedError:
        tools = [
            {**t, "parameters": t.get("input_schema") or {"type": "object", "properties": {}}}
            for t in toolkit._provider_schema("tools")
            if chosen is None or t["name"] in chosen
        ]
    tools = [t for t in tools if t.get("type", "function") == "function"]  # not hosted tools
    return [
        {
            "name": t["name"],
            "description": t.get("description", ""),
            "parameters": t["parameters"],
            "strict": bool(t.get("strict", False)),
        }
        for t in tools
    ]


# -- pydantic-ai -------------------------------------------------------------------------------


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

    definitions = _definitions(toolkit, toolset)
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
                for d in definitions
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


# -- OpenAI Agents SDK -------------------------------------------------------------------------


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
    for d in _definitions(toolkit, toolset):
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


# -- LangChain / LangGraph ---------------------------------------------------------------------

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
        for d in _definitions(toolkit, toolset)
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
        for d in _definitions(toolkit, toolset)
    ]


def _call_id(value: Any) -> str | None:
    if isinstance(value, dict) and value.get("type") == "tool_call":
        call_id = value.get("id")
        return None if call_id is None else str(call_id)
    return None
