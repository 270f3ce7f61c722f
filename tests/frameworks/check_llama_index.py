"""LlamaIndex: the tools in a FunctionAgent workflow, its LLM LlamaIndex's own
MockFunctionCallingLLM with a scripted response generator that records what it was given."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from frameworks_common import (
    PNG,
    SPEC_CALL,
    STATS,
    as_sent,
    assert_example_answers,
    imports_nothing_until_asked,
    without_examples,
)
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools.calling import call_tool
from toolnexus_runtime.integrations import llama_index_tools


class Script:
    """Answers turn n with script[n]: a list of (name, args, id) tool calls, or the final text;
    keeps each turn's messages and tools."""

    def __init__(self, *turns: Any) -> None:
        self.turns = list(turns)
        self.seen: list[tuple[list[ChatMessage], list[Any]]] = []

    def __call__(self, messages: Any, **kwargs: Any) -> ChatMessage:
        self.seen.append((list(messages), list(kwargs.get("tools") or [])))
        step = self.turns[len(self.seen) - 1]
        if isinstance(step, str):
            return ChatMessage(role="assistant", content=step)
        blocks = [ToolCallBlock(tool_call_id=i, tool_name=n, tool_kwargs=a) for n, a, i in step]
        return ChatMessage(role="assistant", blocks=blocks)

    def replies(self) -> dict[str, list[Any]]:
        """Call id -> the blocks of the tool message the model got."""
        return {
            m.additional_kwargs["tool_call_id"]: m.blocks
            for m in self.seen[-1][0]
            if m.role == "tool"
        }


def run(script: Script, tools: list[Any]) -> str:
    async def go() -> str:
        agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=script))
        return str(await agent.run(user_msg="go"))

    return asyncio.run(go())


def texts(blocks: list[Any]) -> list[str]:
    return [b.text for b in blocks if isinstance(b, TextBlock)]


def test_a_bad_call_is_corrected_in_the_loop(
    weather: Any, weather_tk: Any, calls: list[Any]
) -> None:
    script = Script(
        [("get_weather", {"town": "Oslo"}, "c1")],
        [("get_weather", {"city": "Oslo"}, "c2")],
        "Oslo is 21C and clear.",
    )
    tools = llama_index_tools(weather_tk)
    assert run(script, tools) == "Oslo is 21C and clear."
    assert calls == [("get_weather", {"city": "Oslo"}, None, "llama_index")]
    error = weather_tk.execute_sync("get_weather", {"town": "Oslo"}).output
    replies = script.replies()
    assert {k: texts(v) for k, v in replies.items()} == {
        "c1": [error],
        "c2": ["Oslo: 21C, clear"],
    }
    # the tools the model is offered: fn_schema the generated model, parameters as checked in
    assert [t.metadata.fn_schema for t in script.seen[0][1]] == [
        weather.GetWeatherArgs,
        weather.NowArgs,
    ]
    checked_in = weather.to_openai_responses()
    assert [t.metadata.to_openai_tool()["function"] for t in tools] == [
        {"name": d["name"], "description": d["description"], "parameters": d["parameters"]}
        for d in checked_in
    ]


def test_images_structured_output_and_a_toolset(kit: Any, kit_tk: Any, calls: list[Any]) -> None:
    script = Script([("chart", {"month": "May"}, "c1"), ("stats", {"year": 2026}, "c2")], "Done.")
    tools = llama_index_tools(kit_tk, toolset="read")
    assert run(script, tools) == "Done."
    assert [t.metadata.name for t in script.seen[0][1]] == ["chart", "stats"]
    replies = script.replies()
    assert texts(replies["c1"]) == ["Sales of May:\n[image: image/png, 70 bytes]"]
    (image,) = [b for b in replies["c1"] if isinstance(b, ImageBlock)]
    assert image.image_mimetype == "image/png" and image.resolve_image().read() == PNG
    assert texts(replies["c2"]) == [json.dumps(STATS)]
    assert sorted(c[:2] for c in calls) == [("chart", {"month": "May"}), ("stats", {"year": 2026})]
    # the ToolOutput itself: the structured value as raw_output
    stats = asyncio.run(tools[1].acall(year=2025))
    assert (stats.raw_output, stats.is_error) == (STATS, False)


def test_sync_calls_enums_and_nullable(kit: Any, kit_tk: Any, calls: list[Any]) -> None:
    (book,) = [t for t in llama_index_tools(kit_tk) if t.metadata.name == "book"]
    assert book.metadata.fn_schema is kit.BookArgs
    parameters = book.metadata.get_parameters_dict()
    assert parameters["properties"]["room"]["enum"] == ["a", "b"]
    assert parameters["properties"]["note"]["type"] == ["string", "null"]
    done = call_tool(book, {"room": "a", "note": None})  # LlamaIndex's own sync entry point
    assert (done.content, done.is_error) == ("booked a", False)
    bad = book.call(room="z", note=None)
    assert (
        bad.is_error
        and bad.content == kit_tk.execute_sync("book", {"room": "z", "note": None}).output
    )
    assert calls == [("book", {"room": "a", "note": None}, None, "llama_index")]


def test_llama_index_is_imported_only_when_asked(weather_tk: Any) -> None:
    imports_nothing_until_asked("llama_index", "llama_index_tools", weather_tk)


def test_the_example_calls_retries_and_answers(capsys: Any) -> None:
    assert_example_answers("llama_index_agent.py", "llama_index", capsys)


def test_examples_are_not_carried_and_cancelling_the_call_cancels_the_handler(
    kit_tk: Any, slow: Any
) -> None:
    (book,) = [t for t in llama_index_tools(kit_tk) if t.metadata.name == "book"]
    assert without_examples(book.metadata.to_openai_tool())
    (tool,) = [t for t in llama_index_tools(slow.toolkit) if t.metadata.name == "get_weather"]
    asyncio.run(slow.cancel(tool.acall(city="Oslo")))


def test_aliases_map_back(aliased_tk: Any, calls: list[Any]) -> None:
    (tool,) = llama_index_tools(aliased_tk)
    offered = tool.metadata.to_openai_tool()["function"]
    assert offered["name"] != SPEC_CALL[0]
    assert call_tool(tool, as_sent(offered["parameters"])).content == "created"
    assert calls == [(*SPEC_CALL, None, "llama_index")]
