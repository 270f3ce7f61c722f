"""smolagents: the tools in a ToolCallingAgent, its model a scripted smolagents `Model` that
records the messages and tools of each step and answers with tool calls (the last one
smolagents' own final_answer)."""

from __future__ import annotations

import json
from typing import Any

from frameworks_common import (
    SPEC_CALL,
    STATS,
    as_sent,
    assert_example_answers,
    imports_nothing_until_asked,
    without_examples,
)
from smolagents import ToolCallingAgent
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
    get_tool_json_schema,
)
from toolnexus_runtime.integrations import smolagents_tools


class Scripted(Model):
    """Step n answers with script[n], a list of (name, args, id) tool calls."""

    def __init__(self, *steps: Any) -> None:
        super().__init__(model_id="scripted")
        self.steps = list(steps)
        self.seen: list[tuple[list[Any], list[Any]]] = []

    def generate(
        self,
        messages: Any,
        stop_sequences: Any = None,
        response_format: Any = None,
        tools_to_call_from: Any = None,
        **kwargs: Any,
    ) -> ChatMessage:
        self.seen.append((list(messages), list(tools_to_call_from or [])))
        calls = [
            ChatMessageToolCall(
                function=ChatMessageToolCallFunction(name=n, arguments=a), id=i, type="function"
            )
            for n, a, i in self.steps[len(self.seen) - 1]
        ]
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=calls)

    def responses(self) -> list[str]:
        """The text of each tool response the model got, in order."""
        return [
            part["text"]
            for m in self.seen[-1][0]
            if m.role == MessageRole.TOOL_RESPONSE
            for part in m.content
        ]


def done(answer: str, call_id: str) -> list[Any]:
    return [("final_answer", {"answer": answer}, call_id)]


def test_a_bad_call_is_corrected_in_the_loop(
    weather: Any, weather_tk: Any, calls: list[Any]
) -> None:
    model = Scripted(
        [("get_weather", {"town": "Oslo"}, "c1")],  # smolagents' own check refuses it
        [("get_weather", {"city": 7}, "c2")],  # wrong type: smolagents refuses it too
        [("get_weather", {"city": "Oslo"}, "c3")],
        done("Oslo is 21C and clear.", "c4"),
    )
    tools = smolagents_tools(weather_tk)
    agent = ToolCallingAgent(tools=tools, model=model, max_steps=6, verbosity_level=0)
    assert agent.run("Weather in Oslo?") == "Oslo is 21C and clear."
    assert calls == [("get_weather", {"city": "Oslo"}, None, "smolagents")]
    replies = model.responses()
    assert replies[0].startswith("Error:\nArgument town is not in the tool's input schema")
    assert replies[1].startswith("Error:\nArgument city has type 'integer' but should be 'string'")
    assert replies[2] == "Observation:\nOslo: 21C, clear"
    # what the model is offered: the inputs made from the checked-in definition
    checked_in = {t["name"]: t for t in weather.to_openai_responses()}
    offered = {
        get_tool_json_schema(t)["function"]["name"]: get_tool_json_schema(t)["function"]
        for t in model.seen[0][1]
    }
    assert offered["get_weather"] == {
        "name": "get_weather",
        "description": checked_in["get_weather"]["description"],
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    }
    assert {t.name: t.output_type for t in tools} == {"get_weather": "string", "now": "string"}


def test_enums_nullable_toolkit_errors_structured_output_and_a_toolset(
    kit: Any, kit_tk: Any, calls: list[Any]
) -> None:
    tools = {t.name: t for t in smolagents_tools(kit_tk)}
    assert tools["book"].inputs == {
        "room": {"type": "string", "description": "Room name", "enum": ["a", "b"]},
        "note": {"type": "string", "description": "Optional note", "nullable": True},
    }
    assert (tools["stats"].output_type, tools["stats"].output_schema) == (
        "object",
        {t["name"]: t for t in kit.to_mcp()}["stats"]["outputSchema"],
    )
    model = Scripted(
        [("book", {"room": "z", "note": None}, "c1")],  # passes smolagents' check, not the model's
        [("book", {"room": "a", "note": None}, "c2")],
        done("Booked.", "c3"),
    )
    agent = ToolCallingAgent(
        tools=list(tools.values()), model=model, max_steps=5, verbosity_level=0
    )
    assert agent.run("Book a") == "Booked."
    error = kit_tk.execute_sync("book", {"room": "z", "note": None}).output
    replies = model.responses()
    assert replies[0].startswith(
        f"Error:\nError executing tool 'book' with arguments {{'room': 'z', 'note': None}}: ToolError: {error}\n"
    )
    assert replies[1] == "Observation:\nbooked a"
    assert calls == [("book", {"room": "a", "note": None}, None, "smolagents")]

    read = smolagents_tools(kit_tk, toolset="read")
    assert [t.name for t in read] == ["chart", "stats"]
    assert read[1](year=2026) == STATS  # the structured value itself
    assert read[0](month="May") == "Sales of May:\n[image: image/png, 70 bytes]"
    assert json.loads(json.dumps(read[1](year=2025))) == STATS


def test_smolagents_is_imported_only_when_asked(weather_tk: Any) -> None:
    imports_nothing_until_asked("smolagents", "smolagents_tools", weather_tk)


def test_the_example_calls_retries_and_answers(capsys: Any) -> None:
    assert_example_answers(
        "smolagents_agent.py",
        "smolagents",
        capsys,
        refused="Argument town is not in the tool's input schema",
    )


def test_examples_are_not_carried(kit_tk: Any) -> None:
    (book,) = [t for t in smolagents_tools(kit_tk) if t.name == "book"]
    assert without_examples(get_tool_json_schema(book))


def test_tools_run_synchronously_to_the_end(slow: Any) -> None:
    """smolagents calls `forward` synchronously and has no cancellation of a running tool (it
    stops between steps): the call runs on the runtime's loop until the handler returns."""
    import inspect

    (tool,) = [t for t in smolagents_tools(slow.toolkit) if t.name == "get_weather"]
    assert not inspect.iscoroutinefunction(tool.forward)
    assert not hasattr(tool, "cancel") and not hasattr(tool, "aforward")


def test_aliases_map_back(aliased_tk: Any, calls: list[Any]) -> None:
    (tool,) = smolagents_tools(aliased_tk)
    offered = get_tool_json_schema(tool)["function"]
    assert offered["name"] != SPEC_CALL[0]
    assert tool(**as_sent(offered["parameters"]), sanitize_inputs_outputs=True) == "created"
    assert calls == [(*SPEC_CALL, None, "smolagents")]
