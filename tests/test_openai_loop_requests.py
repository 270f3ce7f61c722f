"""The OpenAI Chat loop's requests: what it sends through the official client is what the
client's own `create(messages=..., tools=...)` sends for the same history (body, URL, query and
headers), while the loop skips the SDK's per-call walk of its arguments (it sends the same body
through the client's own `post`) and reads tool turns from the raw JSON (the SDK's
ChatCompletion is built for the final turn only, the same object `parse()` gives).

Every request goes through the official `openai` client on an httpx2.MockTransport; each one
is compared with what the same client sends when `create()` is called by hand.
"""

from __future__ import annotations

import asyncio
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import ROOT, WEATHER, build_in

sys.path.insert(0, str(ROOT / "examples"))
import scripted  # noqa: E402

SCRIPT: list[scripted.Turn] = [
    [("c1", "get_weather", {"city": "Chennai"}), ("c2", "now", {})],
    [("c3", "get_weather", {"town": "Chennai"})],
    "It is 21C and clear in Chennai at 12:00.",
]


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_in(tmp_path_factory.mktemp("openai_loop"), WEATHER)


@pytest.fixture
def tk(pkg: Any) -> Any:
    class Handlers(pkg.ToolHandlers):  # type: ignore[name-defined,misc]
        def get_weather(self, args: Any, ctx: Any) -> str:
            return f"{args.city}: 21C, clear"

        async def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

    return pkg.Toolkit(Handlers())


def by_hand(request: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """The body the official client sends when create() is called with these arguments."""
    client, script = scripted.client_for("openai", ["ok"])
    client.chat.completions.create(**kw)
    [body] = script.requests
    return body


def loop(tk: Any, turns: list[scripted.Turn], asynchronous: bool, **kw: Any) -> Any:
    client, script = scripted.client_for("openai", turns, asynchronous=asynchronous)
    if asynchronous:
        run = asyncio.run(tk.arun_openai(client, **kw))
    else:
        run = tk.run_openai(client, **kw)
    return run, script.requests


@pytest.mark.parametrize("asynchronous", [False, True])
def test_each_request_is_what_create_sends_for_that_history(
    tk: Any, pkg: Any, asynchronous: bool
) -> None:
    question = [{"role": "user", "content": "Weather in Chennai?"}]
    run, requests = loop(
        tk, SCRIPT, asynchronous, model="gpt-test", messages=question, temperature=0.5
    )
    assert len(requests) == 3
    for turn, request in enumerate(requests):
        # The history as it stood at that turn: the question, then per turn the assistant
        # message and one tool message per call (2 + 1 replies before the last request).
        sent = run.messages[: [1, 4, 6][turn]]
        expected = by_hand(
            request, model="gpt-test", messages=sent, tools=pkg.to_openai(), temperature=0.5
        )
        assert request == expected
    from openai.types.chat import ChatCompletion

    assert isinstance(run.response, ChatCompletion)
    assert run.response.choices[0].message.content == SCRIPT[-1]
    assert run.messages[-1] == {"role": "assistant", "content": SCRIPT[-1]}
    assert [r.is_error for _, r in run.tool_calls] == [False, False, True]


def test_message_objects_in_the_callers_history_go_as_create_sends_them(tk: Any, pkg: Any) -> None:
    from openai.types.chat import ChatCompletionMessage

    earlier = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "now", "arguments": "{}"},
                }
            ],
        }
    )
    history = [
        {"role": "user", "content": "What time is it?"},
        earlier,  # a response's message appended as is, as many callers do
        {"role": "tool", "tool_call_id": "c0", "content": "11:59"},
        {"role": "user", "content": "And the weather?"},
    ]
    run, requests = loop(tk, ["ok"], False, model="gpt-test", messages=history)
    expected = by_hand(requests[0], model="gpt-test", messages=history, tools=pkg.to_openai())
    assert requests[0] == expected
    assert run.messages[1] == expected["messages"][1]  # the history holds JSON values


def test_the_callers_extra_body_is_sent_and_wins(tk: Any, pkg: Any) -> None:
    only_now = [t for t in pkg.to_openai() if t["function"]["name"] == "now"]
    _run, requests = loop(
        tk,
        ["ok"],
        False,
        model="gpt-test",
        messages="hi",
        extra_body={"tools": only_now, "seed_hint": 7},
    )
    assert requests[0]["tools"] == only_now and requests[0]["seed_hint"] == 7
    assert requests[0]["messages"] == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_max_turns_keeps_the_sdks_response_object(tk: Any, pkg: Any, asynchronous: bool) -> None:
    from openai.types.chat import ChatCompletion

    endless: list[scripted.Turn] = [[(f"c{i}", "now", {})] for i in range(2)]
    with pytest.raises(pkg.MaxTurnsExceeded) as caught:
        loop(tk, endless, asynchronous, model="gpt-test", messages="hi", max_turns=2)
    assert isinstance(caught.value.run.response, ChatCompletion)
    assert caught.value.run.response.choices[0].message.tool_calls[0].id == "c1"


def test_a_client_without_raw_responses_still_runs(tk: Any) -> None:
    """An OpenAI-compatible client that is not the official SDK (plain dicts, no
    with_raw_response): the loop passes history and tools as the documented arguments."""
    responses = [scripted.openai_chat(turn) for turn in SCRIPT]
    seen: list[dict[str, Any]] = []

    def create(**kw: Any) -> dict[str, Any]:
        seen.append({**kw, "messages": list(kw["messages"])})  # as it was sent
        return responses.pop(0)

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    run = tk.run_openai(client, model="m", messages="Weather in Chennai?")
    assert run.turns == 3 and run.response["choices"][0]["message"]["content"] == SCRIPT[-1]
    assert all(kw["tools"] and "extra_body" not in kw for kw in seen)
    assert [m["role"] for m in seen[-1]["messages"]] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
    ]


def test_streaming_is_refused_before_any_request(tk: Any) -> None:
    client, script = scripted.client_for("openai", ["ok"])
    with pytest.raises(ValueError, match="stream=True is not supported"):
        tk.run_openai(client, model="m", messages="hi", stream=True)
    assert script.requests == []


# -- the whole request, and the keyword arguments create takes -----------------------------------

VOLATILE = {"x-stainless-retry-count", "x-stainless-read-timeout", "content-length"}


class Recorder:
    """A transport that answers scripted turns and keeps each whole request."""

    def __init__(self, turns: list[scripted.Turn], answer: Any = None) -> None:
        self.script = scripted.Script([scripted.openai_chat(t) for t in turns])
        self.seen: list[Any] = []
        self.answer = answer

    def __call__(self, request: Any) -> Any:
        import httpx2

        headers = {k: v for k, v in request.headers.items() if k.lower() not in VOLATILE}
        self.seen.append((request.method, str(request.url), headers))
        if self.answer is not None:
            return httpx2.Response(200, json=self.answer, headers={"x-request-id": "req_42"})
        response = self.script(request)
        response.headers["x-request-id"] = "req_42"
        return response

    def client(self, cls: Any = None, **kw: Any) -> Any:
        import httpx2
        import openai

        if cls is None:
            cls = openai.OpenAI
            kw.setdefault("base_url", f"{scripted.BASE}/v1")
        http = httpx2.Client(transport=httpx2.MockTransport(self))
        return cls(api_key="sk-test", http_client=http, **kw)


OPTIONS = {
    "temperature": 0.25,
    "extra_headers": {"X-Trace": "t-1"},
    "extra_query": {"api-version": "7"},
    "timeout": 12.5,
}


def test_url_query_and_headers_are_what_create_sends(tk: Any, pkg: Any) -> None:
    loop_side = Recorder(["done"])
    run = tk.run_openai(loop_side.client(), model="gpt-test", messages="hi", **OPTIONS)
    by_hand = Recorder(["done"])
    by_hand.client().chat.completions.create(
        model="gpt-test", messages=run.messages[:1], tools=pkg.to_openai(), **OPTIONS
    )
    assert loop_side.seen == by_hand.seen
    method, url, headers = loop_side.seen[0]
    assert (method, url) == ("POST", f"{scripted.BASE}/v1/chat/completions?api-version=7")
    assert headers["authorization"] == "Bearer sk-test" and headers["x-trace"] == "t-1"
    assert loop_side.script.requests == by_hand.script.requests


def _kwarg_sets() -> list[dict[str, Any]]:
    import httpx2
    import openai

    return [
        {"extra_headers": {"X-Stainless-Lang": openai.omit, "X-Other": "1"}},  # removes one
        {"timeout": httpx2.Timeout(3.0, connect=1.0), "max_completion_tokens": 9},
        {"timeout": None, "n": 2, "metadata": {"k": "v"}, "stream": False},
        {"extra_body": {"messages": [{"role": "user", "content": "theirs"}]}, "seed": 3},
        {"extra_query": {"a": "1"}, "extra_headers": None, "extra_body": None},
        {"tool_choice": "required", "parallel_tool_calls": False, "user": "u-1"},
        # create's transform leaves out omit inside its typed dicts and lists an iterable
        {"stream_options": {"include_usage": openai.omit}, "seed": openai.NOT_GIVEN},
        {"web_search_options": {"search_context_size": openai.omit, "user_location": None}},
        {"functions": iter([{"name": "f", "parameters": {}}]), "function_call": "auto"},
    ]


@pytest.mark.parametrize("index", range(9))
def test_other_keyword_sets_send_what_create_sends(tk: Any, pkg: Any, index: int) -> None:
    defaults = {"default_headers": {"X-App": "a"}, "default_query": {"q": "d"}, "max_retries": 0}
    loop_side, by_hand = Recorder(["done"]), Recorder(["done"])
    tk.run_openai(loop_side.client(**defaults), model="m", messages="hi", **_kwarg_sets()[index])
    by_hand.client(**defaults).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        tools=pkg.to_openai(),
        **_kwarg_sets()[index],  # afresh: an iterator in it is used up by the loop's run
    )
    assert loop_side.seen == by_hand.seen
    assert loop_side.script.requests == by_hand.script.requests


def test_omit_and_iterables_in_the_callers_history_go_as_create_sends_them(
    tk: Any, pkg: Any
) -> None:
    import openai

    def history() -> list[dict[str, Any]]:
        parts = ({"type": "text", "text": "Weather in "}, {"type": "text", "text": "Chennai?"})
        return [
            {"role": "system", "content": "Be brief.", "name": openai.omit},
            {"role": "user", "content": iter(parts)},  # an Iterable, as the SDK types it
        ]

    loop_side, by_hand = Recorder(["done"]), Recorder(["done"])
    tk.run_openai(loop_side.client(), model="m", messages=history())
    by_hand.client().chat.completions.create(model="m", messages=history(), tools=pkg.to_openai())
    assert loop_side.seen == by_hand.seen
    assert loop_side.script.requests == by_hand.script.requests
    assert loop_side.script.requests[0]["messages"][0] == {"role": "system", "content": "Be brief."}


def test_an_error_status_raises_the_sdks_own_error_after_its_retries(tk: Any) -> None:
    import httpx2
    import openai

    statuses = [429, 400]
    seen: list[int] = []

    def answer(request: Any) -> Any:
        status = statuses.pop(0)
        seen.append(status)
        error = {"error": {"message": f"nope {status}", "type": "invalid_request_error"}}
        return httpx2.Response(status, json=error, headers={"retry-after-ms": "1"})

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    client = openai.OpenAI(api_key="k", base_url=f"{scripted.BASE}/v1", http_client=http)
    with pytest.raises(openai.BadRequestError, match="nope 400"):
        tk.run_openai(client, model="m", messages="hi")
    assert seen == [429, 400]  # retried once on 429, as create is


def test_an_azure_client_gets_its_deployment_url_as_create_does(tk: Any, pkg: Any) -> None:
    import openai

    azure = {"azure_endpoint": "https://example.openai.azure.com", "api_version": "2024-10-21"}
    loop_side, by_hand = Recorder(["done"]), Recorder(["done"])
    run = tk.run_openai(loop_side.client(openai.AzureOpenAI, **azure), model="dep", messages="hi")
    by_hand.client(openai.AzureOpenAI, **azure).chat.completions.create(
        model="dep", messages=run.messages[:1], tools=pkg.to_openai()
    )
    assert loop_side.seen == by_hand.seen
    assert "/openai/deployments/dep/chat/completions" in loop_side.seen[0][1]


def test_an_unknown_keyword_is_refused_as_create_refuses_it(tk: Any) -> None:
    recorder = Recorder(["done"])
    with pytest.raises(TypeError, match="temprature"):
        tk.run_openai(recorder.client(), model="m", messages="hi", temprature=0.5)
    assert recorder.seen == []  # before any request


def test_omitted_values_are_left_out_and_a_class_is_refused(tk: Any) -> None:
    import openai
    from pydantic import BaseModel

    recorder = Recorder(["done"])
    tk.run_openai(recorder.client(), model="m", messages="hi", temperature=openai.omit, seed=None)
    assert "temperature" not in recorder.script.requests[0]
    assert recorder.script.requests[0]["seed"] is None  # None is a value: sent, as create does

    class Answer(BaseModel):
        text: str

    with pytest.raises(TypeError, match="parse"):
        tk.run_openai(recorder.client(), model="m", messages="hi", response_format=Answer)
    assert len(recorder.seen) == 1


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_final_response_is_the_object_parse_builds(tk: Any, asynchronous: bool) -> None:
    import httpx2
    import openai

    recorder = Recorder(SCRIPT)
    if asynchronous:
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(recorder))
        client = openai.AsyncOpenAI(api_key="k", base_url=f"{scripted.BASE}/v1", http_client=http)
        run = asyncio.run(tk.arun_openai(client, model="m", messages="hi"))
    else:
        run = tk.run_openai(recorder.client(), model="m", messages="hi")
    parsed = (
        Recorder(SCRIPT[-1:])
        .client()
        .chat.completions.with_raw_response.create(model="m", messages=[])
        .parse()
    )
    assert run.response == parsed and run.response.model_dump() == parsed.model_dump()
    assert run.response._request_id == parsed._request_id == "req_42"


def test_an_answer_outside_the_types_is_built_leniently_or_refused_as_the_sdk_does(
    tk: Any,
) -> None:
    import openai

    for created in ("yesterday", "123"):  # not an int; the second one coercible to one
        odd = scripted.openai_chat("fine")
        odd["created"] = created
        run = tk.run_openai(Recorder([], answer=odd).client(), model="m", messages="hi")
        assert run.response.created == created  # as parse() keeps it, not coerced
        assert run.response.choices[0].message.content == "fine"
    odd["created"] = "yesterday"
    strict = Recorder([], answer=odd).client(_strict_response_validation=True)
    with pytest.raises(openai.APIResponseValidationError):
        tk.run_openai(strict, model="m", messages="hi")


@pytest.mark.parametrize("where", ["class", "client"])
def test_an_instrumented_create_is_called_so_tracing_still_sees_every_turn(
    tk: Any, pkg: Any, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tracing libraries (OpenTelemetry's and Langfuse's OpenAI instrumentation) wrap
    `Completions.create`: the loop calls it then, every turn, with the documented arguments."""
    import functools

    from openai.resources.chat.completions.completions import Completions

    seen: list[dict[str, Any]] = []
    original = Completions.create
    recorder = Recorder(SCRIPT)
    client = recorder.client()

    @functools.wraps(original)
    def traced(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append({**kwargs, "messages": list(kwargs["messages"])})  # as it was then
        return original(self, *args, **kwargs)

    if where == "class":
        monkeypatch.setattr(Completions, "create", traced)
    else:
        client.chat.completions.create = functools.partial(traced, client.chat.completions)
    run = tk.run_openai(client, model="m", messages="Weather in Chennai?", temperature=0.5)
    assert len(seen) == 3 and all(kw["tools"] == pkg.to_openai() for kw in seen)
    assert [len(kw["messages"]) for kw in seen] == [1, 4, 6]
    assert recorder.script.requests[-1]["temperature"] == 0.5
    assert run.response.choices[0].message.content == SCRIPT[-1]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_strict_client_validates_tool_turns_too_as_create_would(
    tk: Any, asynchronous: bool
) -> None:
    import httpx2
    import openai

    odd = scripted.openai_chat([("c1", "now", {})])
    odd["created"] = "yesterday"  # a tool turn outside the SDK's types
    recorder = Recorder([], answer=odd)
    with pytest.raises(openai.APIResponseValidationError):
        if asynchronous:  # its parse() is a coroutine: it was never awaited, the turn unchecked
            http = httpx2.AsyncClient(transport=httpx2.MockTransport(recorder))
            client = openai.AsyncOpenAI(
                api_key="k",
                base_url=f"{scripted.BASE}/v1",
                http_client=http,
                _strict_response_validation=True,
            )
            asyncio.run(tk.arun_openai(client, model="m", messages="hi"))
        else:
            client = recorder.client(_strict_response_validation=True)
            tk.run_openai(client, model="m", messages="hi")
    assert len(recorder.seen) == 1  # refused at the first turn, no tool run on it
