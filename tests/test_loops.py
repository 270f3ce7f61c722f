"""The tool loops, driven through the official SDK clients against scripted responses.

No test reaches the network: openai, anthropic and google-genai get an httpx2.MockTransport,
boto3 gets botocore's Stubber (which validates every Converse request against the API model).
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import threading
import typing
from typing import Any

import pytest
from conftest import ROOT, WEATHER, build_in
from pydantic import TypeAdapter

sys.path.insert(0, str(ROOT / "examples"))
import scripted  # noqa: E402

SPECS = {
    **WEATHER,
    "slow.yaml": {
        "description": "Sleeps",
        "input_schema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
}
PROVIDERS = ["openai", "openai_responses", "anthropic", "gemini", "bedrock"]
ASYNC_PROVIDERS = ["openai", "openai_responses", "anthropic", "gemini"]
# Two calls in one turn; a call with bad arguments the model then corrects; an unknown tool.
SCRIPT: list[scripted.Turn] = [
    [("c1", "get_weather", {"city": "Chennai"}), ("c2", "now", {})],
    [("c3", "get_weather", {"town": "Chennai"})],
    [("c4", "get_weather", {"city": "Chennai"}), ("c5", "launch_rocket", {})],
    "It is 21C and clear in Chennai at 12:00.",
]
FINAL = "It is 21C and clear in Chennai at 12:00."


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_in(tmp_path_factory.mktemp("loops"), SPECS)


@pytest.fixture
def tk(pkg: Any) -> Any:
    class Handlers(pkg.ToolHandlers):  # type: ignore[name-defined,misc]
        async def get_weather(self, args: Any, ctx: Any) -> str:
            return f"{args.city}: 21C, clear"

        def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

        async def slow(self, args: Any, ctx: Any) -> str:
            await asyncio.sleep(args.seconds or 0)
            return "slept"

    return pkg.Toolkit(Handlers())


def start(provider: str, prompt: str = "Weather in Chennai?") -> dict[str, Any]:
    """The keyword arguments a user passes to run_<provider>."""
    if provider == "openai":
        return {"model": "gpt-test", "messages": [{"role": "user", "content": prompt}]}
    if provider == "openai_responses":
        return {"model": "gpt-test", "input": prompt}
    if provider == "anthropic":
        return {"model": "claude-test", "messages": [{"role": "user", "content": prompt}]}
    if provider == "gemini":
        return {"model": "gemini-test", "contents": prompt}
    return {
        "modelId": "bedrock-test",
        "messages": [{"role": "user", "content": [{"text": prompt}]}],
    }


def capture_bedrock(client: Any) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = []

    def hook(params: dict[str, Any], **_: Any) -> None:
        requests.append(params)

    client.meta.events.register("provide-client-params.bedrock-runtime.Converse", hook)
    return requests


def run(tk: Any, provider: str, turns: list[scripted.Turn], asynchronous: bool = False, **kw: Any):
    client, recorder = scripted.client_for(provider, turns, asynchronous=asynchronous)
    requests = capture_bedrock(client) if provider == "bedrock" else recorder.requests
    if asynchronous:
        result = asyncio.run(getattr(tk, f"arun_{provider}")(client, **start(provider), **kw))
    else:
        result = getattr(tk, f"run_{provider}")(client, **start(provider), **kw)
    if provider == "bedrock":
        recorder.assert_no_pending_responses()
    return result, requests


def final_text(provider: str, response: Any) -> str:
    if provider == "openai":
        return response.choices[0].message.content
    if provider == "openai_responses":
        return response.output_text
    if provider == "anthropic":
        return response.content[0].text
    if provider == "gemini":
        return response.text
    return response["output"]["message"]["content"][0]["text"]


def assert_history_accepted_by_sdk_types(provider: str, messages: list[Any]) -> None:
    if provider == "openai":
        from openai.types.chat import ChatCompletionMessageParam

        TypeAdapter(list[ChatCompletionMessageParam]).validate_python(messages)
        known = set().union(
            *(typing.get_type_hints(t).keys() for t in typing.get_args(ChatCompletionMessageParam))
        )
        assert all(set(m) <= known for m in messages)
    elif provider == "openai_responses":
        from openai.types.responses import ResponseInputParam

        TypeAdapter(ResponseInputParam).validate_python(messages)
    elif provider == "anthropic":
        from anthropic.types import MessageParam

        for message in messages:
            TypeAdapter(MessageParam).validate_python(message, strict=True)
            assert set(message) == {"role", "content"}
    elif provider == "gemini":
        from google.genai import types

        for content in messages:
            types.Content.model_validate(content)


@pytest.mark.parametrize(
    ("provider", "asynchronous"),
    [(p, False) for p in PROVIDERS] + [(p, True) for p in ASYNC_PROVIDERS],
)
def test_loop_runs_to_the_final_answer(tk: Any, provider: str, asynchronous: bool) -> None:
    result, requests = run(tk, provider, SCRIPT, asynchronous)

    assert final_text(provider, result.response) == FINAL
    assert result.turns == 4 == len(requests)
    outcomes = [(call.name, call.context.call_id, res.is_error) for call, res in result.tool_calls]
    assert outcomes == [
        ("get_weather", "c1", False),
        ("now", "c2", False),
        ("get_weather", "c3", True),
        ("get_weather", "c4", False),
        ("launch_rocket", "c5", True),
    ]
    errors = [res.output for _, res in result.tool_calls if res.is_error]
    assert "city" in errors[0] and "Field required" in errors[0]
    assert "Unknown tool 'launch_rocket'" in errors[1] and "get_weather" in errors[1]
    assert all(call.context.provider == provider for call, _ in result.tool_calls)
    # Every request offered the tools; the history grows by one model turn and one reply per turn.
    for request in requests:
        key = "toolConfig" if provider == "bedrock" else "tools"
        assert request[key], f"request without tools: {request}"
    assert_history_accepted_by_sdk_types(provider, result.messages)
    # Sending the returned history again works through the SDK (and, for Bedrock, its validator).
    client, _recorder = scripted.client_for(provider, ["Nothing."])
    continued = getattr(tk, f"run_{provider}")(
        client, **{**start(provider), **_history_kw(provider, result.messages)}
    )
    assert final_text(provider, continued.response) == "Nothing."
    assert continued.messages[: len(result.messages)] == result.messages


def _history_kw(provider: str, messages: list[Any]) -> dict[str, Any]:
    key = {"openai_responses": "input", "gemini": "contents"}.get(provider, "messages")
    return {key: messages}


def test_openai_tool_messages_follow_the_assistant_message(tk: Any) -> None:
    result, requests = run(tk, "openai", SCRIPT)
    history = requests[-1]["messages"]
    assistant = history[1]
    assert assistant["role"] == "assistant"
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1", "c2"]
    assert [(m["role"], m["tool_call_id"]) for m in history[2:4]] == [
        ("tool", "c1"),
        ("tool", "c2"),
    ]
    assert history[2]["content"] == "Chennai: 21C, clear"
    assert result.messages[-1] == {"role": "assistant", "content": FINAL}


def test_responses_items_pair_call_ids(tk: Any) -> None:
    result, requests = run(tk, "openai_responses", SCRIPT)
    items = requests[-1]["input"]
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert calls == outputs == ["c1", "c2", "c3", "c4", "c5"]
    assert any(i.get("type") == "reasoning" for i in items)  # reasoning items are kept
    for request in requests:
        assert all(tool["strict"] in (True, False) for tool in request["tools"])


def test_anthropic_tool_results_lead_the_next_user_message(tk: Any) -> None:
    _result, requests = run(tk, "anthropic", SCRIPT)
    history = requests[-1]["messages"]
    assert history[1]["content"][0] == {
        "type": "thinking",
        "thinking": "Which tools?",
        "signature": "sig-abc",
    }
    reply = history[2]
    assert reply["role"] == "user"
    assert [b["type"] for b in reply["content"]] == ["tool_result", "tool_result"]
    assert [b["tool_use_id"] for b in reply["content"]] == ["c1", "c2"]
    assert history[4]["content"][0]["is_error"] is True
    assert requests[0]["max_tokens"] == 4096


def test_gemini_echoes_thought_signature_and_call_id(tk: Any) -> None:
    _result, requests = run(tk, "gemini", SCRIPT)
    contents = requests[-1]["contents"]
    model_turn = contents[1]
    assert model_turn["role"] == "model"
    assert [p["thoughtSignature"] for p in model_turn["parts"]] == ["c2lnLTE=", "c2lnLTE="]
    responses = [p["functionResponse"] for p in contents[2]["parts"]]
    assert [(r["id"], r["name"]) for r in responses] == [("c1", "get_weather"), ("c2", "now")]
    assert "error" in contents[4]["parts"][0]["functionResponse"]["response"]
    assert len(requests[0]["tools"]) == 1  # still the single wrapper


def test_gemini_keeps_the_callers_config(tk: Any) -> None:
    from google.genai import types

    config = types.GenerateContentConfig(temperature=0.25, system_instruction="Be brief.")
    client, script = scripted.client_for("gemini", ["ok"])
    tk.run_gemini(client, model="g", contents="hi", config=config)
    body = script.requests[0]
    assert body["generationConfig"]["temperature"] == 0.25
    assert body["systemInstruction"]["parts"][0]["text"] == "Be brief."
    assert body["tools"][0]["functionDeclarations"]


def test_bedrock_keeps_tool_config_on_every_request(tk: Any) -> None:
    result, requests = run(tk, "bedrock", SCRIPT, toolConfig={"toolChoice": {"auto": {}}})
    assert len(requests) == 4
    for request in requests:
        assert request["toolConfig"]["toolChoice"] == {"auto": {}}
        assert [t["toolSpec"]["name"] for t in request["toolConfig"]["tools"]] == [
            "get_weather",
            "now",
            "slow",
        ]
    statuses = [
        block["toolResult"]["status"]
        for message in result.messages
        if message["role"] == "user"
        for block in message["content"]
        if "toolResult" in block
    ]
    assert statuses == ["success", "success", "error", "success", "error"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_reaching_max_turns_is_a_clear_error(tk: Any, pkg: Any, provider: str) -> None:
    endless = [[(f"c{i}", "now", {})] for i in range(3)]
    with pytest.raises(pkg.MaxTurnsExceeded) as caught:
        run(tk, provider, endless, max_turns=3)
    assert "max_turns=3" in str(caught.value)
    assert caught.value.run.turns == 3
    assert len(caught.value.run.tool_calls) == 3
    assert caught.value.run.messages  # the history so far, tool results included


def test_tool_subset_limits_what_is_offered_and_run(tk: Any) -> None:
    turns: list[scripted.Turn] = [[("c1", "get_weather", {"city": "Oslo"})], "ok"]
    result, requests = run(tk, "openai", turns, tools=["now"])
    assert [t["function"]["name"] for t in requests[0]["tools"]] == ["now"]
    [(_call, outcome)] = result.tool_calls
    assert outcome.is_error and "Unknown tool 'get_weather'" in outcome.output
    with pytest.raises(ValueError, match="launch_rocket"):
        run(tk, "openai", turns, tools=["launch_rocket"])
    with pytest.raises(ValueError, match="max_turns"):
        run(tk, "openai", turns, max_turns=0)


def test_hooks_approve_deny_and_log(tk: Any, pkg: Any) -> None:
    seen: list[tuple[str, str]] = []

    def approve(call: Any) -> Any:
        seen.append(("call", call.name))
        if call.name == "now":
            return pkg.ToolResult("Not allowed: ask the user first.", is_error=True)
        return None

    async def log(call: Any, result: Any) -> None:
        seen.append(("result", f"{call.name}:{result.is_error}"))

    result, requests = run(
        tk, "anthropic", SCRIPT[:1] + ["done"], on_tool_call=approve, on_tool_result=log
    )
    # Calls of one turn run concurrently, so only each call's own order is fixed.
    assert sorted(seen) == [
        ("call", "get_weather"),
        ("call", "now"),
        ("result", "get_weather:False"),
        ("result", "now:True"),
    ]
    assert seen.index(("call", "now")) < seen.index(("result", "now:True"))
    denied = requests[-1]["messages"][2]["content"][1]
    assert denied["is_error"] is True and denied["content"] == "Not allowed: ask the user first."


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_sync_loop_runs_its_hooks_in_the_calling_thread_in_call_order(
    tk: Any, provider: str
) -> None:
    # No hop to an event loop for sync hooks: each call's on_tool_call in call order, then
    # each call's on_tool_result in call order, all in the thread that runs the loop.
    seen: list[tuple[str, str, int]] = []

    def before(call: Any) -> None:
        seen.append(("call", call.name, threading.get_ident()))

    def after(call: Any, result: Any) -> None:
        seen.append(("result", f"{call.name}:{result.is_error}", threading.get_ident()))

    result, _ = run(tk, provider, SCRIPT[:1] + ["done"], on_tool_call=before, on_tool_result=after)
    here = threading.get_ident()
    assert seen == [
        ("call", "get_weather", here),
        ("call", "now", here),
        ("result", "get_weather:False", here),
        ("result", "now:False", here),
    ]
    assert [call.name for call, _ in result.tool_calls] == ["get_weather", "now"]


SPAN: contextvars.ContextVar[str] = contextvars.ContextVar("span", default="none")


@pytest.mark.parametrize("asynchronous", [False, True])
def test_what_on_tool_call_sets_in_a_context_variable_reaches_that_calls_handler_only(
    pkg: Any, asynchronous: bool
) -> None:
    # A tracing hook sets the call's span in on_tool_call and reads it in on_tool_result: each
    # call's handler and on_tool_result see that call's value (as in its task in the async
    # loop), whether the handler runs inline, in a worker thread or on the runtime's loop; the
    # caller's context is left as it was. The sync loop ran every handler under the last
    # call's span and left it set in the caller's context.
    class Handlers(pkg.ToolHandlers):  # type: ignore[name-defined,misc]
        def get_weather(self, args: Any, ctx: Any) -> str:
            return SPAN.get()

        def now(self, args: Any, ctx: Any) -> str:
            return SPAN.get()

        async def slow(self, args: Any, ctx: Any) -> str:
            return SPAN.get()

    ended: list[tuple[str, str]] = []

    def before(call: Any) -> None:
        SPAN.set(f"span of {call.context.call_id}")

    def after(call: Any, result: Any) -> None:
        ended.append((str(call.context.call_id), SPAN.get()))

    turns: list[scripted.Turn] = [
        [("c1", "get_weather", {"city": "Oslo"}), ("c2", "now", {}), ("c3", "slow", {})],
        "done",
    ]
    result, _ = run(
        pkg.Toolkit(Handlers()),
        "openai",
        turns,
        asynchronous,
        on_tool_call=before,
        on_tool_result=after,
    )
    assert [r.output for _, r in result.tool_calls] == ["span of c1", "span of c2", "span of c3"]
    assert sorted(ended) == [("c1", "span of c1"), ("c2", "span of c2"), ("c3", "span of c3")]
    assert SPAN.get() == "none"


def test_tool_timeout_and_sdk_kwargs_pass_through(tk: Any) -> None:
    turns: list[scripted.Turn] = [[("c1", "slow", {"seconds": 5})], "ok"]
    result, requests = run(tk, "openai", turns, tool_timeout=0.05, temperature=0.5)
    [(_call, outcome)] = result.tool_calls
    assert outcome.is_error and "did not finish within 0.05 seconds" in outcome.output
    assert all(r["temperature"] == 0.5 for r in requests)


def test_sync_loop_works_inside_a_running_event_loop(tk: Any) -> None:
    async def main() -> Any:
        client, _ = scripted.client_for("openai", SCRIPT)
        return tk.run_openai(client, **start("openai"))

    assert asyncio.run(main()).turns == 4


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_async_handler_keeps_loop_bound_state_across_sync_loop_turns(
    pkg: Any, provider: str
) -> None:
    """An asyncio.Queue made on the first call is used on every later turn of a sync loop (the
    runtime runs them all on one long-lived event loop, never a new one per turn)."""

    class Stateful(pkg.ToolHandlers):  # type: ignore[name-defined,misc]
        queue: asyncio.Queue[str] | None = None
        loops: set[int] = set()

        async def get_weather(self, args: Any, ctx: Any) -> str:
            if self.queue is None:
                self.queue = asyncio.Queue()
            self.loops.add(id(asyncio.get_running_loop()))
            await self.queue.put(args.city)
            return f"queued {self.queue.qsize()}"

        async def now(self, args: Any, ctx: Any) -> str:
            assert self.queue is not None
            self.loops.add(id(asyncio.get_running_loop()))
            return f"took {await asyncio.wait_for(self.queue.get(), 1)}"

        def slow(self, args: Any, ctx: Any) -> str:
            return "slept"

    handlers = Stateful()
    turns: list[scripted.Turn] = [
        [("q1", "get_weather", {"city": "Oslo"})],
        [("q2", "get_weather", {"city": "Rome"})],
        [("q3", "now", {})],
        [("q4", "now", {})],
        "done",
    ]
    result, _ = run(pkg.Toolkit(handlers), provider, turns)
    outputs = [r.output for _, r in result.tool_calls]
    assert outputs == ["queued 1", "queued 2", "took Oslo", "took Rome"]
    assert len(handlers.loops) == 1
