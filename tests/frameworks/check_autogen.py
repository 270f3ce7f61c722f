"""AutoGen: the tools on an AssistantAgent (autogen-agentchat), its model client AutoGen's own
ReplayChatCompletionClient, recording what each request would send (messages, tools)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import CreateResult, FunctionExecutionResultMessage, RequestUsage
from autogen_core.tools import StaticWorkbench
from autogen_ext.models.replay import ReplayChatCompletionClient
from frameworks_common import (
    SPEC_CALL,
    STATS,
    as_sent,
    assert_example_answers,
    imports_nothing_until_asked,
    without_examples,
)
from toolnexus_runtime.integrations import autogen_tools

MODEL_INFO = {
    "vision": False,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}


class Recording(ReplayChatCompletionClient):  # type: ignore[misc]
    seen: list[tuple[list[Any], list[Any]]]

    async def create(self, messages: Any, *, tools: Any = (), **kwargs: Any) -> Any:
        self.seen.append((list(messages), list(tools)))
        return await super().create(messages, tools=tools, **kwargs)


def client(*turns: Any) -> Recording:
    script: list[Any] = []
    for turn in turns:
        if isinstance(turn, str):
            script.append(turn)
            continue
        calls = [FunctionCall(id=i, name=n, arguments=json.dumps(a)) for n, a, i in turn]
        script.append(
            CreateResult(
                finish_reason="function_calls",
                content=calls,
                usage=RequestUsage(0, 0),
                cached=False,
            )
        )
    replay = Recording(script, model_info=MODEL_INFO)
    replay.seen = []
    return replay


def results(model: Recording) -> dict[str, tuple[str, bool]]:
    """Call id -> (content, is_error) of each function result the model got."""
    return {
        r.call_id: (r.content, r.is_error)
        for m in model.seen[-1][0]
        if isinstance(m, FunctionExecutionResultMessage)
        for r in m.content
    }


def run(model: Recording, tools: list[Any]) -> Any:
    agent = AssistantAgent("assistant", model_client=model, tools=tools, max_tool_iterations=5)
    return asyncio.run(agent.run(task="go"))


def test_a_bad_call_is_corrected_in_the_loop(
    weather: Any, weather_tk: Any, calls: list[Any]
) -> None:
    model = client(
        [("get_weather", {"town": "Oslo"}, "c1")],
        [("get_weather", {"city": "Oslo"}, "c2")],
        "Oslo is 21C and clear.",
    )
    tools = autogen_tools(weather_tk)
    outcome = run(model, tools)
    assert outcome.messages[-1].content == "Oslo is 21C and clear."
    assert calls == [("get_weather", {"city": "Oslo"}, "c2", "autogen")]
    error = weather_tk.execute_sync("get_weather", {"town": "Oslo"}).output
    assert results(model) == {"c1": (error, True), "c2": ("Oslo: 21C, clear", False)}
    # the tool schemas each request carries are the checked-in definitions, strict included
    expected = [
        {k: d[k] for k in ("name", "description", "parameters", "strict")}
        for d in weather.to_openai_responses()
    ]
    for _, offered in model.seen:
        assert offered == expected
    assert [t.args_type() for t in tools] == [weather.GetWeatherArgs, weather.NowArgs]


def test_strict_structured_output_and_a_toolset(kit: Any, kit_tk: Any, calls: list[Any]) -> None:
    checked_in = {d["name"]: d for d in kit.to_openai_responses()}
    by_name = {t.name: t for t in autogen_tools(kit_tk)}
    assert by_name["book"].schema == {
        k: checked_in["book"][k] for k in ("name", "description", "parameters", "strict")
    }
    assert by_name["book"].schema["strict"] is True and by_name["chart"].schema["strict"] is False
    model = client([("chart", {"month": "May"}, "c1"), ("stats", {"year": 2026}, "c2")], "Done.")
    run(model, autogen_tools(kit_tk, toolset="read"))
    assert [t["name"] for t in model.seen[0][1]] == ["chart", "stats"]
    assert results(model) == {
        "c1": ("Sales of May:\n[image: image/png, 70 bytes]", False),
        "c2": (json.dumps(STATS), False),
    }
    assert sorted(c[:3] for c in calls) == [  # the two calls run concurrently
        ("chart", {"month": "May"}, "c1"),
        ("stats", {"year": 2026}, "c2"),
    ]


def test_cancelling_the_token_cancels_the_call(weather: Any) -> None:
    started, outcome = asyncio.Event(), []

    class Slow(weather.ToolHandlers):  # type: ignore[misc]
        async def get_weather(self, args: Any, ctx: Any) -> str:
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                outcome.append("cancelled")
                raise
            return "late"

        def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

    async def go() -> None:
        workbench = StaticWorkbench(autogen_tools(weather.Toolkit(Slow())))
        token = CancellationToken()
        call = asyncio.ensure_future(
            workbench.call_tool("get_weather", {"city": "Oslo"}, token, "c1")
        )
        await asyncio.wait_for(started.wait(), 5)
        token.cancel()
        try:
            await asyncio.wait_for(call, 5)
        except asyncio.CancelledError:
            outcome.append("call cancelled")

    asyncio.run(go())
    assert outcome == ["cancelled", "call cancelled"]


def test_autogen_is_imported_only_when_asked(weather_tk: Any) -> None:
    imports_nothing_until_asked("autogen_core", "autogen_tools", weather_tk)


def test_the_example_calls_retries_and_answers(capsys: Any) -> None:
    assert_example_answers("autogen_agent.py", "autogen", capsys)


def test_examples_are_not_carried(kit_tk: Any) -> None:
    (book,) = [t for t in autogen_tools(kit_tk) if t.name == "book"]
    assert without_examples(book.schema)


def test_aliases_map_back(aliased_tk: Any, calls: list[Any]) -> None:
    (tool,) = autogen_tools(aliased_tk)
    assert tool.schema["name"] != SPEC_CALL[0]
    arguments = as_sent(tool.schema["parameters"])
    assert asyncio.run(tool.run_json(arguments, CancellationToken(), call_id="a1")) == "created"
    assert calls == [(*SPEC_CALL, "a1", "autogen")]
