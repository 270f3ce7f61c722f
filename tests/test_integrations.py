"""The generated Toolkit inside pydantic-ai, the OpenAI Agents SDK and LangGraph, each driven end
to end by the framework's own test model: the exact checked-in schema is what the framework
offers, a bad argument comes back correctable, the model retries, and the call id arrives."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Annotated, Any

import pytest
from conftest import ROOT
from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

WEATHER = ROOT / "examples" / "weather"


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


@pytest.fixture(scope="module")
def tools() -> Any:
    sys.path.insert(0, str(WEATHER))
    try:
        import tools
    finally:
        sys.path.remove(str(WEATHER))
    return tools


@pytest.fixture
def calls() -> list[tuple[str, str | None, str | None]]:
    return []


@pytest.fixture
def tk(tools: Any, calls: list[tuple[str, str | None, str | None]]) -> Any:
    class Handlers(tools.ToolHandlers):  # type: ignore[misc]
        async def get_weather(self, args: Any, ctx: Any) -> str:
            calls.append((args.city, ctx.call_id, ctx.provider))
            return f"{args.city}: 21C, clear"

        def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

    return tools.Toolkit(Handlers())


def checked_in(tools: Any) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in tools.to_openai_responses()}


def test_pydantic_ai_function_model(tools: Any, tk: Any, calls: list[Any]) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from toolnexus_runtime.integrations import pydantic_ai_toolset

    seen: dict[str, Any] = {}
    retries: list[str] = []

    def model(messages: list[Any], info: Any) -> ModelResponse:
        seen["tools"] = {t.name: t for t in info.function_tools}
        step = len(messages)
        if step == 1:
            return ModelResponse(parts=[ToolCallPart("get_weather", {"town": "Oslo"}, "call_1")])
        if step == 3:
            retries.extend(
                str(getattr(p, "content", ""))
                for p in messages[-1].parts
                if "retry" in type(p).__name__.lower() or getattr(p, "outcome", "") == "retried"
            )
            return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Oslo"}, "call_2")])
        return ModelResponse(parts=[TextPart("Oslo is 21C and clear.")])

    agent = Agent(FunctionModel(model), toolsets=[pydantic_ai_toolset(tk)])
    result = agent.run_sync("Weather in Oslo?")
    assert result.output == "Oslo is 21C and clear."
    assert calls == [("Oslo", "call_2", "pydantic_ai")]
    assert retries and "city: Field required" in retries[0]
    offered = seen["tools"]["get_weather"]
    expected = checked_in(tools)["get_weather"]
    assert offered.parameters_json_schema == expected["parameters"]
    assert offered.description == expected["description"]


def test_openai_agents_scripted_model(tools: Any, tk: Any, calls: list[Any]) -> None:
    from agents import Agent, ModelSettings, Runner
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )
    from toolnexus_runtime.integrations import openai_agents_tools

    outputs: dict[str, str] = {}

    class Scripted(Model):
        def __init__(self) -> None:
            self.turn = 0
            self.tools: list[Any] = []

        async def get_response(
            self, system_instructions: Any, input: Any, *a: Any, **k: Any
        ) -> Any:
            self.turn += 1
            self.tools = a[2] if len(a) > 2 else k.get("tools", [])
            for item in input if isinstance(input, list) else []:
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    outputs[item["call_id"]] = item["output"]
            if self.turn == 1:
                items = [call("c1", {"town": "Oslo"})]
            elif self.turn == 2:
                items = [call("c2", {"city": "Oslo"})]
            else:
                text = ResponseOutputText(type="output_text", text="Oslo: clear.", annotations=[])
                items = [
                    ResponseOutputMessage(
                        id="m", type="message", role="assistant", status="completed", content=[text]
                    )
                ]
            return ModelResponse(output=items, usage=Usage(), response_id=None)

        def stream_response(self, *a: Any, **k: Any) -> Any:
            raise NotImplementedError

    def call(call_id: str, arguments: dict[str, Any]) -> Any:
        return ResponseFunctionToolCall(
            type="function_call",
            call_id=call_id,
            name="get_weather",
            arguments=json.dumps(arguments),
            id=f"fc_{call_id}",
            status="completed",
        )

    model = Scripted()
    offered = openai_agents_tools(tk)
    agent = Agent(name="weather", model=model, tools=offered, model_settings=ModelSettings())
    result = asyncio.run(Runner.run(agent, "Weather in Oslo?"))
    assert result.final_output == "Oslo: clear."
    assert calls == [("Oslo", "c2", "openai_agents")]
    assert "Invalid arguments for tool 'get_weather': city: Field required" in outputs["c1"]
    assert outputs["c2"] == "Oslo: 21C, clear"
    expected = checked_in(tools)
    by_name = {t.name: t for t in offered}
    assert by_name["get_weather"].params_json_schema == expected["get_weather"]["parameters"]
    assert by_name["get_weather"].strict_json_schema is expected["get_weather"]["strict"]
    assert by_name["now"].description == expected["now"]["description"]


def test_langgraph_tool_node_in_a_graph(tools: Any, tk: Any, calls: list[Any]) -> None:
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.graph import END, START, StateGraph
    from langgraph.prebuilt import ToolNode
    from toolnexus_runtime.integrations import langchain_tools

    lc_tools = langchain_tools(tk)
    script = [
        AIMessage("", tool_calls=[{"name": "get_weather", "args": {"town": "Oslo"}, "id": "t1"}]),
        AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "t2"}]),
        AIMessage("Oslo is 21C and clear."),
    ]

    def model(state: State) -> dict[str, Any]:
        return {"messages": [script[sum(isinstance(m, AIMessage) for m in state["messages"])]]}

    def route(state: State) -> str:
        return "tools" if state["messages"][-1].tool_calls else END  # type: ignore[union-attr]

    graph = StateGraph(State)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode(lc_tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["tools", END])
    graph.add_edge("tools", "model")
    final = asyncio.run(graph.compile().ainvoke({"messages": [("user", "Weather in Oslo?")]}))
    replies = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.status) for m in replies] == [("t1", "error"), ("t2", "success")]
    assert "city: Field required" in replies[0].content
    assert replies[1].content == "Oslo: 21C, clear"
    assert final["messages"][-1].content == "Oslo is 21C and clear."
    assert calls == [("Oslo", "t2", "langchain")]
    # What LangChain sends a model is the checked-in schema.
    sent = {t.name: convert_to_openai_tool(t)["function"] for t in lc_tools}
    expected = checked_in(tools)["get_weather"]
    assert sent["get_weather"]["parameters"] == expected["parameters"]
    assert sent["get_weather"]["description"] == expected["description"]
    # And the sync path (invoke with a ToolCall) answers with the call id too.
    message = lc_tools[0].invoke(
        {"type": "tool_call", "name": "get_weather", "args": {"city": "Rome"}, "id": "t3"}
    )
    assert isinstance(message, ToolMessage) and message.tool_call_id == "t3"
    assert calls[-1] == ("Rome", "t3", "langchain")


def test_pydantic_ai_sends_a_non_strict_tool_as_written(tools: Any, tk: Any) -> None:
    """pydantic-ai decides strictness itself when a tool's `strict` is None (and rewrites the
    schema to OpenAI's strict form): a non-strict spec must reach OpenAI unchanged."""
    import httpx2
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from toolnexus_runtime.integrations import pydantic_ai_toolset

    sent: list[Any] = []

    def reply(request: Any) -> Any:
        sent.append(json.loads(request.content))
        message = {"role": "assistant", "content": "Clear."}
        body = {
            "id": "r1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
        return httpx2.Response(200, json=body)

    client = AsyncOpenAI(
        api_key="test", http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(reply))
    )
    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
    agent = Agent(model, toolsets=[pydantic_ai_toolset(tk)])
    assert agent.run_sync("Weather in Oslo?").output == "Clear."
    offered = {t["function"]["name"]: t["function"] for t in sent[0]["tools"]}
    for name, definition in checked_in(tools).items():
        assert definition["strict"] is False  # the weather specs are not strict
        assert offered[name]["parameters"] == definition["parameters"], name
        assert offered[name].get("strict", False) is False, name


def test_langchain_passes_a_property_named_run_manager_and_carries_strict(
    tmp_path: Any,
) -> None:
    from conftest import build_in
    from langchain_core.messages import ToolMessage
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from toolnexus_runtime.integrations import langchain_tool_schemas, langchain_tools

    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.openai_responses]\ntransforms = ["strictify"]\n'
    )
    pkg = build_in(
        tmp_path,
        {
            "deploy.json": {
                "description": "Deploy a service",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "service": {"type": "string"},
                        "run_manager": {"type": "string", "description": "Who runs it"},
                        "callbacks": {"type": "integer"},
                    },
                    "required": ["service", "run_manager"],
                },
            }
        },
    )

    class Handlers(pkg.ToolHandlers):  # type: ignore[misc]
        def deploy(self, args: Any, ctx: Any) -> str:
            return f"{args.service} by {args.run_manager} ({args.callbacks})"

    tk = pkg.Toolkit(Handlers())
    (tool,) = langchain_tools(tk)
    call = {"service": "api", "run_manager": "ana", "callbacks": 3}
    message = tool.invoke({"type": "tool_call", "name": "deploy", "args": call, "id": "t1"})
    assert isinstance(message, ToolMessage) and message.status == "success", message
    assert message.content == "api by ana (3)"
    assert asyncio.run(tool.ainvoke(call)) == "api by ana (3)"
    # What LangChain binds: the checked-in definition, strict included, passed through unchanged.
    (expected,) = pkg.to_openai_responses()
    assert expected["strict"] is True
    (definition,) = langchain_tool_schemas(tk)
    assert convert_to_openai_tool(definition) == definition
    assert definition["function"] == {
        "name": "deploy",
        "description": expected["description"],
        "parameters": expected["parameters"],
        "strict": True,
    }


# -- strict and non-strict tools, exactly as checked in, in each framework ---------------------

STRICT_SPECS = {
    "book.yaml": {
        "description": "Book a room",
        "strict": True,
        "input_schema": {
            "type": "object",
            "properties": {
                "room": {"type": "string", "description": "Room name", "enum": ["a", "b"]},
                "when": {"type": "string", "format": "date-time"},
                "guests": {"type": "array", "items": {"$ref": "#/$defs/Guest"}},
                "note": {"type": ["string", "null"], "description": "optional note"},
            },
            "required": ["room", "when", "guests", "note"],
            "additionalProperties": False,
            "$defs": {
                "Guest": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "age": {"type": ["integer", "null"]},
                    },
                    "required": ["name", "age"],
                    "additionalProperties": False,
                }
            },
        },
    },
    "tag.yaml": {  # strict, with a default the strict converters of the frameworks drop
        "description": "Tag a room",
        "strict": True,
        "input_schema": {
            "type": "object",
            "properties": {"label": {"type": ["string", "null"], "default": None}},
            "required": ["label"],
            "additionalProperties": False,
        },
    },
    "look.yaml": {  # not strict: optional arguments, a default, an open object
        "description": "Look up",
        "input_schema": {
            "type": "object",
            "properties": {"q": {"type": "string", "default": "x"}, "limit": {"type": "integer"}},
            "required": ["q"],
        },
    },
}


@pytest.fixture(scope="module")
def strict_pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from conftest import build_in

    folder = tmp_path_factory.mktemp("strict")
    (folder / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\ntargets = ["openai", "openai_responses", "anthropic", "mcp"]\n'
    )
    return build_in(folder, STRICT_SPECS)


@pytest.fixture
def strict_tk(strict_pkg: Any) -> Any:
    class Handlers(strict_pkg.ToolHandlers):  # type: ignore[misc]
        def book(self, args: Any, ctx: Any) -> str:
            return "booked"

        def tag(self, args: Any, ctx: Any) -> str:
            return "tagged"

        def look(self, args: Any, ctx: Any) -> str:
            return "found"

    return strict_pkg.Toolkit(Handlers())


def openai_client(sent: list[Any]) -> Any:
    """An AsyncOpenAI whose requests are recorded and answered with a final text."""
    import httpx2
    from openai import AsyncOpenAI

    def reply(request: Any) -> Any:
        sent.append(json.loads(request.content))
        if request.url.path.endswith("/responses"):
            text = {"type": "output_text", "text": "done", "annotations": []}
            message = {
                "type": "message",
                "id": "m",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
            body: dict[str, Any] = {
                "id": "r",
                "object": "response",
                "created_at": 0,
                "model": "gpt-4o",
                "status": "completed",
                "output": [message],
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
            }
        else:
            body = {
                "id": "r",
                "object": "chat.completion",
                "created": 0,
                "model": "gpt-4o",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "done"},
                        "finish_reason": "stop",
                    }
                ],
            }
        return httpx2.Response(200, json=body)

    return AsyncOpenAI(
        api_key="test", http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(reply))
    )


def offered_tools(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """name -> {parameters, strict} as one Chat Completions or Responses request sent them."""
    found = {}
    for tool in request["tools"]:
        function = tool.get("function", tool)
        found[function["name"]] = function
    return found


def without_defaults(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: without_defaults(v) for k, v in schema.items() if k != "default"}
    if isinstance(schema, list):
        return [without_defaults(v) for v in schema]
    return schema


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_pydantic_ai_keeps_strict_and_non_strict_tools_as_checked_in(
    strict_pkg: Any, strict_tk: Any, api: str
) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from toolnexus_runtime.integrations import pydantic_ai_toolset

    sent: list[Any] = []
    model_type = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
    provider = OpenAIProvider(openai_client=openai_client(sent))
    agent = Agent(
        model_type("gpt-4o", provider=provider), toolsets=[pydantic_ai_toolset(strict_tk)]
    )
    assert agent.run_sync("Book room a").output == "done"
    offered = offered_tools(sent[0])
    checked_in = {t["name"]: t for t in strict_pkg.to_openai_responses()}
    assert {n: t["strict"] for n, t in checked_in.items()} == {
        "book": True,
        "look": False,
        "tag": True,
    }
    for name in ("book", "look"):
        assert offered[name]["parameters"] == checked_in[name]["parameters"], name
    # pydantic-ai's OpenAI profile drops `default` from a strict schema (its own rule)
    assert offered["tag"]["parameters"] == without_defaults(checked_in["tag"]["parameters"])
    assert offered["book"]["strict"] is True and offered["tag"]["strict"] is True
    # a non-strict tool says so where omitting it would mean strict (Responses)
    assert offered["look"].get("strict", False) is False
    if api == "responses":
        assert offered["look"]["strict"] is False


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_agents_keeps_strict_and_non_strict_tools_exactly_as_checked_in(
    strict_pkg: Any, strict_tk: Any, api: str
) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunConfig, Runner
    from toolnexus_runtime.integrations import openai_agents_tools

    sent: list[Any] = []
    client = openai_client(sent)
    model_type = OpenAIChatCompletionsModel if api == "chat" else OpenAIResponsesModel
    agent = Agent(
        name="rooms",
        model=model_type(model="gpt-4o", openai_client=client),
        tools=openai_agents_tools(strict_tk),
    )
    run = Runner.run(agent, "Book room a", run_config=RunConfig(tracing_disabled=True))
    assert asyncio.run(run).final_output == "done"
    offered = offered_tools(sent[0])
    for name, checked in {t["name"]: t for t in strict_pkg.to_openai_responses()}.items():
        assert offered[name]["parameters"] == checked["parameters"], name  # `default` kept
        assert offered[name]["strict"] is checked["strict"], name


def test_langchain_tools_carry_strict_as_checked_in(strict_pkg: Any, strict_tk: Any) -> None:
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from toolnexus_runtime.integrations import langchain_tool_schemas, langchain_tools

    checked_in = {t["name"]: t for t in strict_pkg.to_openai_responses()}
    tools = {tool.name: tool for tool in langchain_tools(strict_tk)}
    assert set(tools) == set(checked_in)
    for name, tool in tools.items():
        assert tool.extras == {"strict": checked_in[name]["strict"]}, name
        assert tool.metadata == {"strict": checked_in[name]["strict"]}, name
    # what binds both exactly: the checked-in definitions, passed through LangChain unchanged
    for definition in langchain_tool_schemas(strict_tk):
        function = definition["function"]
        assert convert_to_openai_tool(definition) == definition
        assert function["strict"] is checked_in[function["name"]]["strict"]
        assert function["parameters"] == checked_in[function["name"]]["parameters"]


FRAMEWORKS = {  # integration -> the framework module it imports when called
    "pydantic_ai_toolset": "pydantic_ai",
    "openai_agents_tools": "agents",
    "langchain_tools": "langchain_core",
    "google_adk_tools": "google.adk",
    "crewai_tools": "crewai",
    "llama_index_tools": "llama_index",
    "smolagents_tools": "smolagents",
    "strands_tools": "strands",
    "autogen_tools": "autogen_core",
}


def test_no_framework_is_imported_until_its_integration_is_called() -> None:
    """The generated package and every integration import no framework; calling one imports
    its own only (the six others are not installed here: tests/test_frameworks.py runs each in
    its own venv and checks the same there)."""
    code = f"""
import json, sys
sys.path.insert(0, {str(WEATHER)!r})
import tools
import toolnexus_runtime.integrations as integrations
class H(tools.ToolHandlers):
    def get_weather(self, args, ctx): return "clear"
    def now(self, args, ctx): return "12:00"
tk = tools.Toolkit(H())
frameworks = {FRAMEWORKS!r}
loaded = lambda: sorted(f for f in frameworks.values() if f in sys.modules)
seen = [loaded()]
for name in ["pydantic_ai_toolset", "openai_agents_tools", "langchain_tools"]:
    getattr(integrations, name)(tk)
    seen.append(loaded())
print(json.dumps(seen))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        [],
        ["pydantic_ai"],
        ["agents", "pydantic_ai"],
        ["agents", "langchain_core", "pydantic_ai"],
    ]


# -- what each of the three carries besides the schema: examples, images, cancellation ---------

CARRY_SPECS = {
    "chart.yaml": {
        "description": "Chart a month",
        "examples": [{"month": "May"}],
        "input_schema": {
            "type": "object",
            "properties": {"month": {"type": "string"}},
            "required": ["month"],
        },
    },
}
PNG = bytes.fromhex("89504e470d0a1a0a")  # a PNG signature: what the chart tool "draws"


@pytest.fixture(scope="module")
def chart_pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from conftest import build_in

    return build_in(tmp_path_factory.mktemp("chart"), CARRY_SPECS)


def chart_toolkit(chart_pkg: Any, outcome: list[str]) -> Any:
    from toolnexus_runtime.content import Image

    class Handlers(chart_pkg.ToolHandlers):  # type: ignore[misc]
        async def chart(self, args: Any, ctx: Any) -> Any:
            if args.month == "never":  # waits until cancelled
                outcome.append("started")
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    outcome.append("cancelled")
                    raise
            return [f"Sales of {args.month}:", Image(PNG, "image/png")]

    return chart_pkg.Toolkit(Handlers())


async def cancel(call: Any, outcome: list[str]) -> None:
    task = asyncio.ensure_future(call)
    while "started" not in outcome:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert outcome == ["started", "cancelled"]


def test_pydantic_ai_examples_images_and_cancellation(chart_pkg: Any) -> None:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage
    from toolnexus_runtime.integrations import pydantic_ai_toolset

    assert chart_pkg.to_anthropic()[0]["input_examples"] == [{"month": "May"}]
    outcome: list[str] = []
    toolset = pydantic_ai_toolset(chart_toolkit(chart_pkg, outcome))
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage(), tool_call_id="c1")
    (tool,) = asyncio.run(toolset.get_tools(ctx)).values()
    assert "examples" not in json.dumps(tool.tool_def.parameters_json_schema)
    answer = asyncio.run(toolset.call_tool("chart", {"month": "May"}, ctx, tool))
    assert answer == "Sales of May:\n[image: image/png, 8 bytes]"
    asyncio.run(cancel(toolset.call_tool("chart", {"month": "never"}, ctx, tool), outcome))


def test_openai_agents_examples_images_and_cancellation(chart_pkg: Any) -> None:
    from agents.tool_context import ToolContext as AgentsContext
    from toolnexus_runtime.integrations import openai_agents_tools

    outcome: list[str] = []
    (tool,) = openai_agents_tools(chart_toolkit(chart_pkg, outcome))
    assert "examples" not in json.dumps(tool.params_json_schema)

    def ctx(arguments: str) -> Any:
        return AgentsContext(
            context=None, tool_name="chart", tool_call_id="c1", tool_arguments=arguments
        )

    month = json.dumps({"month": "May"})
    answer = asyncio.run(tool.on_invoke_tool(ctx(month), month))
    assert answer == "Sales of May:\n[image: image/png, 8 bytes]"
    never = json.dumps({"month": "never"})
    asyncio.run(cancel(tool.on_invoke_tool(ctx(never), never), outcome))


def test_langchain_examples_images_and_cancellation(chart_pkg: Any) -> None:
    from toolnexus_runtime.integrations import langchain_tool_schemas, langchain_tools

    outcome: list[str] = []
    tk = chart_toolkit(chart_pkg, outcome)
    (tool,) = langchain_tools(tk)
    assert "examples" not in json.dumps(langchain_tool_schemas(tk))
    call = {"type": "tool_call", "name": "chart", "args": {"month": "May"}, "id": "c1"}
    message = asyncio.run(tool.ainvoke(call))
    assert (message.tool_call_id, message.content) == (
        "c1",
        "Sales of May:\n[image: image/png, 8 bytes]",
    )
    never = {**call, "args": {"month": "never"}}
    asyncio.run(cancel(tool.ainvoke(never), outcome))
