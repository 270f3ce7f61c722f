"""The OpenAI Chat loop's requests: what it sends through the official client is what the
client's own `create(messages=..., tools=...)` sends for the same history, while the loop skips
the SDK's per-call walk of the history (it sends history and tools in extra_body) and reads tool
turns from the raw JSON (the SDK's ChatCompletion is built for the final turn only).

Every request goes through the official `openai` client on an httpx2.MockTransport; each body
is compared with the body the same client sends when `create()` is called by hand.
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
