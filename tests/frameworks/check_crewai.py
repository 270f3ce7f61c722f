"""CrewAI: the tools on an Agent run by `Agent.kickoff`, its LLM a scripted BaseLLM with native
function calling that records each call (the messages and the tool schemas a provider would be
sent) and answers with tool calls."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import Agent  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from frameworks_common import (  # noqa: E402
    SPEC_CALL,
    STATS,
    as_sent,
    assert_example_answers,
    imports_nothing_until_asked,
    without_examples,
)
from toolnexus_runtime.integrations import crewai_tools  # noqa: E402


class Scripted(BaseLLM):  # type: ignore[misc]
    """Answers call n with script[n]: a list of (name, args, id) tool calls, or the final text."""

    script: list[Any] = []
    seen: list[tuple[list[Any], list[Any]]] = []

    def call(self, messages: Any, tools: Any = None, *args: Any, **kwargs: Any) -> Any:
        self.seen.append((json.loads(json.dumps(messages, default=str)), tools or []))
        step = self.script[len(self.seen) - 1]
        if isinstance(step, str):
            return step
        return [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for n, a, i in step
        ]

    def supports_function_calling(self) -> bool:
        return True


def tool_messages(llm: Scripted) -> dict[str, str]:
    """Call id -> the tool message content the model got."""
    return {
        m["tool_call_id"]: m["content"]
        for messages, _ in llm.seen
        for m in messages
        if m.get("role") == "tool"
    }


def kickoff(llm: Scripted, tools: list[Any]) -> str:
    agent = Agent(role="assistant", goal="answer", backstory="-", llm=llm, tools=tools)
    return str(agent.kickoff("go").raw)


def test_a_bad_call_is_corrected_in_the_loop(
    weather: Any, weather_tk: Any, calls: list[Any]
) -> None:
    llm = Scripted(
        model="scripted",
        script=[
            [("get_weather", {"town": "Oslo"}, "c1")],
            [("get_weather", {"city": "Oslo"}, "c2")],
            "Oslo is 21C and clear.",
        ],
        seen=[],
    )
    tools = crewai_tools(weather_tk)
    assert kickoff(llm, tools) == "Oslo is 21C and clear."
    assert calls == [("get_weather", {"city": "Oslo"}, None, "crewai")]
    error = weather_tk.execute_sync("get_weather", {"town": "Oslo"}).output
    assert tool_messages(llm) == {"c1": error, "c2": "Oslo: 21C, clear"}
    # args_schema is the generated model; what CrewAI sends keeps its descriptions
    by_name = {t.name: t for t in tools}
    assert by_name["get_weather"].args_schema is weather.GetWeatherArgs
    assert by_name["now"].args_schema is weather.NowArgs
    checked_in = {t["name"]: t for t in weather.to_openai_responses()}
    sent = {t["function"]["name"]: t["function"] for t in llm.seen[0][1]}
    assert set(sent) == set(checked_in)
    # CrewAI sends every tool strict (the weather specs are not): its rule, not the spec's
    assert {n: f["strict"] for n, f in sent.items()} == {"get_weather": True, "now": True}
    assert {d["strict"] for d in checked_in.values()} == {False}
    for name, definition in checked_in.items():
        assert sent[name]["description"] == definition["description"]
        properties = definition["parameters"].get("properties", {})
        assert {
            p: s.get("description") for p, s in sent[name]["parameters"]["properties"].items()
        } == {p: s.get("description") for p, s in properties.items()}


def test_enums_nullable_structured_output_images_and_a_toolset(
    kit: Any, kit_tk: Any, calls: list[Any]
) -> None:
    llm = Scripted(
        model="scripted",
        script=[
            [
                ("book", {"room": "b", "note": None}, "c1"),
                ("book", {"room": "z", "note": None}, "c2"),
            ],
            "Booked.",
        ],
        seen=[],
    )
    assert kickoff(llm, crewai_tools(kit_tk)) == "Booked."
    # the handler got what the model sent, validated once by the toolkit (no model_dump)
    assert calls == [("book", {"room": "b", "note": None}, None, "crewai")]
    got = tool_messages(llm)
    assert got["c1"] == "booked b"
    assert got["c2"] == kit_tk.execute_sync("book", {"room": "z", "note": None}).output
    assert got["c2"].startswith("Invalid arguments for tool 'book': room:")
    sent = {t["function"]["name"]: t["function"]["parameters"] for t in llm.seen[0][1]}
    assert sent["book"]["properties"]["room"]["enum"] == ["a", "b"]
    assert {"type": "null"} in sent["book"]["properties"]["note"]["anyOf"]

    calls.clear()
    llm = Scripted(
        model="scripted",
        script=[[("chart", {"month": "May"}, "c1"), ("stats", {"year": 2026}, "c2")], "Done."],
        seen=[],
    )
    tools = crewai_tools(kit_tk, toolset="read")
    assert [t.name for t in tools] == ["chart", "stats"]
    assert kickoff(llm, tools) == "Done."
    assert [t["function"]["name"] for t in llm.seen[0][1]] == ["chart", "stats"]
    assert tool_messages(llm) == {
        "c1": "Sales of May:\n[image: image/png, 70 bytes]",
        "c2": json.dumps(STATS),
    }
    assert sorted(c[:2] for c in calls) == [("chart", {"month": "May"}), ("stats", {"year": 2026})]


def test_crewai_is_imported_only_when_asked(weather_tk: Any) -> None:
    imports_nothing_until_asked("crewai", "crewai_tools", weather_tk)


def test_the_example_calls_retries_and_answers(capsys: Any) -> None:
    assert_example_answers("crewai_agent.py", "crewai", capsys)


def test_examples_are_not_carried_and_cancelling_the_call_cancels_the_handler(
    kit_tk: Any, slow: Any
) -> None:
    from crewai.utilities.agent_utils import convert_tools_to_openai_schema

    (book,) = [t for t in crewai_tools(kit_tk) if t.name == "book"]
    assert without_examples(convert_tools_to_openai_schema([book])[0])
    (tool,) = [t for t in crewai_tools(slow.toolkit) if t.name == "get_weather"]
    asyncio.run(slow.cancel(tool.arun(city="Oslo")))


def test_aliases_map_back(aliased_tk: Any, calls: list[Any]) -> None:
    from crewai.utilities.agent_utils import convert_tools_to_openai_schema

    (tool,) = crewai_tools(aliased_tk)
    (offered,) = convert_tools_to_openai_schema([tool])[0]
    assert offered["function"]["name"] == tool.name != SPEC_CALL[0]
    assert tool.run(**as_sent(offered["function"]["parameters"])) == "created"
    assert calls == [(*SPEC_CALL, None, "crewai")]
