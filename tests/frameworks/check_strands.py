"""Strands Agents: the tools on a strands Agent, its model a scripted strands `Model` that
records what each request would send (messages, tool specs) and streams tool uses back in the
Bedrock ConverseStream event shape Strands models produce."""

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
from strands import Agent
from strands.models import Model
from strands.tools import normalize_tool_spec
from toolnexus_runtime.integrations import strands_tools


class Scripted(Model):
    """Turn n answers with script[n]: a list of (name, args, id) tool uses, or the final text."""

    def __init__(self, *turns: Any) -> None:
        self.turns = list(turns)
        self.seen: list[tuple[list[Any], list[Any]]] = []

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, tool_specs: Any = None, *args: Any, **kwargs: Any) -> Any:
        self.seen.append((json.loads(json.dumps(messages, default=repr)), list(tool_specs or [])))
        self.messages = messages  # as they are (bytes kept)
        step = self.turns[len(self.seen) - 1]
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(step, str):
            yield {"contentBlockDelta": {"delta": {"text": step}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        for name, arguments, call_id in step:
            yield {
                "contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}
            }
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}

    def results(self) -> dict[str, Any]:
        """toolUseId -> the toolResult the model got back."""
        return {
            block["toolResult"]["toolUseId"]: block["toolResult"]
            for message in self.messages
            for block in message["content"]
            if "toolResult" in block
        }


def test_a_bad_call_is_corrected_in_the_loop(
    weather: Any, weather_tk: Any, calls: list[Any]
) -> None:
    model = Scripted(
        [("get_weather", {"town": "Oslo"}, "c1")],
        [("get_weather", {"city": "Oslo"}, "c2")],
        "Oslo is 21C and clear.",
    )
    agent = Agent(model=model, tools=strands_tools(weather_tk), callback_handler=None)
    assert str(agent("Weather in Oslo?")).strip() == "Oslo is 21C and clear."
    assert calls == [("get_weather", {"city": "Oslo"}, "c2", "strands")]
    error = weather_tk.execute_sync("get_weather", {"town": "Oslo"}).output
    assert model.results() == {
        "c1": {"toolUseId": "c1", "status": "error", "content": [{"text": error}]},
        "c2": {"toolUseId": "c2", "status": "success", "content": [{"text": "Oslo: 21C, clear"}]},
    }
    # the model is sent the checked-in toolSpecs, as Strands normalises them
    checked_in = [t["toolSpec"] for t in weather.to_bedrock()["tools"]]
    for _, specs in model.seen:
        assert sorted(specs, key=lambda s: s["name"]) == [
            normalize_tool_spec(s) for s in checked_in
        ]
    (get_weather,) = [s for s in model.seen[0][1] if s["name"] == "get_weather"]
    assert get_weather == checked_in[0]  # fully described: sent exactly as checked in


def test_images_structured_output_invocation_state_and_a_toolset(
    kit: Any, kit_tk: Any, calls: list[Any], contexts: list[Any]
) -> None:
    model = Scripted([("chart", {"month": "May"}, "c1"), ("stats", {"year": 2026}, "c2")], "Done.")
    agent = Agent(model=model, tools=strands_tools(kit_tk, toolset="read"), callback_handler=None)
    assert str(agent("Sales?", team="north")).strip() == "Done."
    assert sorted(s["name"] for s in model.seen[0][1]) == ["chart", "stats"]
    assert sorted(c[:3] for c in calls) == [  # the two calls run concurrently
        ("chart", {"month": "May"}, "c1"),
        ("stats", {"year": 2026}, "c2"),
    ]
    results = model.results()
    assert results["c1"] == {
        "toolUseId": "c1",
        "status": "success",
        "content": [
            {"text": "Sales of May:"},
            {"image": {"format": "png", "source": {"bytes": PNG}}},
        ],
    }
    assert results["c2"] == {"toolUseId": "c2", "status": "success", "content": [{"json": STATS}]}
    assert contexts[-1].user["invocation_state"]["team"] == "north"


def test_enums_and_nullable_as_checked_in(kit: Any, kit_tk: Any) -> None:
    (book,) = [t for t in strands_tools(kit_tk) if t.tool_name == "book"]
    (checked_in,) = [
        t["toolSpec"] for t in kit.to_bedrock()["tools"] if t["toolSpec"]["name"] == "book"
    ]
    assert book.tool_spec == checked_in
    assert normalize_tool_spec(book.tool_spec) == checked_in  # described throughout: unchanged
    properties = checked_in["inputSchema"]["json"]["properties"]
    assert properties["room"]["enum"] == ["a", "b"]


def test_strands_is_imported_only_when_asked(weather_tk: Any) -> None:
    imports_nothing_until_asked("strands", "strands_tools", weather_tk)


def test_the_example_calls_retries_and_answers(capsys: Any) -> None:
    assert_example_answers("strands_agent.py", "strands", capsys)


def test_examples_are_not_carried_and_cancelling_the_call_cancels_the_handler(
    kit_tk: Any, slow: Any
) -> None:
    (book,) = [t for t in strands_tools(kit_tk) if t.tool_name == "book"]
    assert without_examples(book.tool_spec)
    (tool,) = [t for t in strands_tools(slow.toolkit) if t.tool_name == "get_weather"]

    async def drain() -> None:
        use = {"toolUseId": "c1", "name": "get_weather", "input": {"city": "Oslo"}}
        async for _ in tool.stream(use, {}):
            pass

    asyncio.run(slow.cancel(drain()))


def test_aliases_map_back(aliased_tk: Any, calls: list[Any]) -> None:
    (tool,) = strands_tools(aliased_tk)
    assert tool.tool_name != SPEC_CALL[0]
    use = {"toolUseId": "a1", "name": tool.tool_name}

    async def answer() -> Any:
        arguments = as_sent(tool.tool_spec["inputSchema"]["json"])
        return [event async for event in tool.stream({**use, "input": arguments}, {})][-1]

    event = asyncio.run(answer())
    assert event.tool_result["content"] == [{"text": "created"}]
    assert calls == [(*SPEC_CALL, "a1", "strands")]
