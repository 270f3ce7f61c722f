"""Google ADK: the tools in an LlmAgent run by ADK's InMemoryRunner, its model a scripted BaseLlm
that records each request (what Gemini would be sent) and answers with function calls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from types import SimpleNamespace
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
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from toolnexus_runtime.integrations import google_adk_tools, google_adk_toolset


class Scripted(BaseLlm):
    """Answers turn n with script[n]: a list of (name, args, id) calls, or the final text."""

    model: str = "scripted"
    script: list[Any] = []
    requests: list[LlmRequest] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request.model_copy(deep=True))
        step = self.script[len(self.requests) - 1]
        if isinstance(step, str):
            parts = [types.Part(text=step)]
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(name=n, args=a, id=i))
                for n, a, i in step
            ]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def run(agent: LlmAgent, state: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    async def go() -> tuple[str, dict[str, Any]]:
        runner = InMemoryRunner(agent=agent, app_name="t")
        session = await runner.session_service.create_session(
            app_name="t", user_id="u", state=state or {}
        )
        text = ""
        async for event in runner.run_async(
            user_id="u",
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text="go")]),
        ):
            for part in (event.content.parts if event.content else None) or ():
                text = part.text or text
        final = await runner.session_service.get_session(
            app_name="t", user_id="u", session_id=session.id
        )
        assert final is not None
        return text, dict(final.state)

    return asyncio.run(go())


def responses(request: LlmRequest) -> dict[str, types.FunctionResponse]:
    """Call id -> the function response the model got in this request."""
    found = {}
    for content in request.contents:
        for part in content.parts or ():
            if part.function_response is not None:
                found[part.function_response.id] = part.function_response
    return found


def offered(request: LlmRequest) -> list[types.FunctionDeclaration]:
    return [d for tool in request.config.tools or () for d in tool.function_declarations or ()]


def checked_in(package: Any) -> list[dict[str, Any]]:
    return [d for w in package.to_gemini() for d in w["functionDeclarations"]]


def test_a_bad_call_is_corrected_in_the_loop(
    weather: Any, weather_tk: Any, calls: list[Any]
) -> None:
    model = Scripted(
        script=[
            [("get_weather", {"town": "Oslo"}, "c1")],
            [("get_weather", {"city": "Oslo"}, "c2")],
            "Oslo is 21C and clear.",
        ],
        requests=[],
    )
    agent = LlmAgent(name="weather", model=model, tools=google_adk_tools(weather_tk))
    text, _ = run(agent)
    assert text == "Oslo is 21C and clear."
    assert calls == [("get_weather", {"city": "Oslo"}, "c2", "google_adk")]
    expected_error = asyncio.run(weather_tk.execute("get_weather", {"town": "Oslo"})).output
    assert responses(model.requests[1])["c1"].response == {"error": expected_error}
    assert responses(model.requests[2])["c2"].response == {"output": "Oslo: 21C, clear"}
    # Gemini is sent the checked-in declarations, as the SDK's own type
    for request in model.requests:
        assert offered(request) == [
            types.FunctionDeclaration.model_validate(d) for d in checked_in(weather)
        ]
    sent = [
        d.model_dump(mode="json", by_alias=True, exclude_none=True)
        for d in offered(model.requests[0])
    ]
    assert json.loads(json.dumps(sent).lower()) == json.loads(
        json.dumps(checked_in(weather)).lower()
    )


def test_images_structured_output_state_and_a_toolset(
    kit: Any, kit_tk: Any, calls: list[Any], contexts: list[Any]
) -> None:
    model = Scripted(
        script=[[("chart", {"month": "May"}, "c1"), ("stats", {"year": 2026}, "c2")], "Done."],
        requests=[],
    )
    agent = LlmAgent(name="sales", model=model, tools=[google_adk_toolset(kit_tk, toolset="read")])
    text, state = run(agent, {"team": "north"})
    assert text == "Done."
    assert [d.name for d in offered(model.requests[0])] == ["chart", "stats"]
    assert offered(model.requests[0]) == [
        types.FunctionDeclaration.model_validate(d) for d in checked_in(kit) if d["name"] != "book"
    ]
    assert sorted(c[:3] for c in calls) == [  # the two calls run concurrently
        ("chart", {"month": "May"}, "c1"),
        ("stats", {"year": 2026}, "c2"),
    ]
    got = responses(model.requests[1])
    assert got["c1"].response == {"output": "Sales of May:\n[image: image/png, 70 bytes]"}
    (image,) = got["c1"].parts or ()
    assert image.inline_data is not None
    assert (image.inline_data.mime_type, image.inline_data.data) == ("image/png", PNG)
    assert got["c2"].response == {"output": STATS}
    # ADK's context: invocation id and session state (what the handler writes is saved)
    user = contexts[-1].user
    assert user["invocation_id"] == user["tool_context"].invocation_id
    assert user["invocation_id"].startswith("e-")
    assert user["state"]["team"] == "north"
    assert state == {"team": "north", "asked": 2026}


def test_a_toolset_filter_and_prefix_per_agent(kit: Any, kit_tk: Any) -> None:
    model = Scripted(script=["ok"], requests=[])
    toolset = google_adk_toolset(kit_tk, tool_filter=["book"], tool_name_prefix="kit")
    run(LlmAgent(name="a", model=model, tools=[toolset]))
    (declaration,) = offered(model.requests[0])
    (book,) = [d for d in checked_in(kit) if d["name"] == "book"]
    assert declaration == types.FunctionDeclaration.model_validate({**book, "name": "kit_book"})
    # enum and nullable as checked in
    assert declaration.parameters is not None and declaration.parameters.properties is not None
    assert declaration.parameters.properties["room"].enum == ["a", "b"]
    assert declaration.parameters.properties["note"].nullable is True


def test_adk_is_imported_only_when_asked(weather_tk: Any) -> None:
    imports_nothing_until_asked("google.adk", "google_adk_tools", weather_tk)


def test_the_example_calls_retries_and_answers(capsys: Any) -> None:
    assert_example_answers("google_adk_agent.py", "google_adk", capsys)


def test_examples_are_not_carried_and_cancelling_the_run_cancels_the_call(
    kit_tk: Any, slow: Any
) -> None:
    (book,) = [t for t in google_adk_tools(kit_tk) if t.name == "book"]
    assert without_examples(book._get_declaration().model_dump())
    (tool,) = [t for t in google_adk_tools(slow.toolkit) if t.name == "get_weather"]
    context = SimpleNamespace(function_call_id="c1", invocation_id="e-1", state={})
    asyncio.run(slow.cancel(tool.run_async(args={"city": "Oslo"}, tool_context=context)))


def test_aliases_map_back(aliased_tk: Any, calls: list[Any]) -> None:
    (tool,) = google_adk_tools(aliased_tk)
    declaration = tool._get_declaration().model_dump(by_alias=True, exclude_none=True)
    schema = declaration.get("parameters") or declaration["parametersJsonSchema"]
    context = SimpleNamespace(function_call_id="a1", invocation_id="e-1", state={})
    answer = asyncio.run(tool.run_async(args=as_sent(schema), tool_context=context))
    assert answer == {"output": "created"}
    assert calls == [(*SPEC_CALL, "a1", "google_adk")]
