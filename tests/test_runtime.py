"""The generated package, imported and executed: Toolkit, execute, errors as results, round trips."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from conftest import WEATHER
from pydantic import BaseModel

SPECS = {
    **WEATHER,
    "forecast.yaml": {
        "description": "Forecast for several days",
        "input_schema": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 3},
                "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
                "from": {"type": "string", "description": "a Python keyword as a property"},
            },
            "required": ["city"],
        },
    },
    "slow.yaml": {
        "description": "Sleeps",
        "input_schema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    "boom.yaml": {"description": "Always fails"},
}


@pytest.fixture
def pkg(build_package: Any) -> Any:
    return build_package(SPECS)


@pytest.fixture
def tk(pkg: Any) -> Any:
    class Handlers(pkg.ToolHandlers):  # type: ignore[name-defined,misc]
        async def get_weather(self, args: Any, ctx: Any) -> str:
            return f"{args.city}: 21C, clear"

        def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

        def forecast(self, args: Any, ctx: Any) -> Any:
            return {
                "city": args.city,
                "days": args.days,
                "units": args.units.value,
                "from": args.from_,
                "call": ctx.call_id,
                "provider": ctx.provider,
                "tool": ctx.tool_name,
            }

        finished: list[str] = []

        async def slow(self, args: Any, ctx: Any) -> str:
            await asyncio.sleep(args.seconds or 0)
            self.finished.append(ctx.call_id)
            return f"slept {args.seconds}"

        def boom(self, args: Any, ctx: Any) -> str:
            raise RuntimeError("disk on fire")

    return pkg.Toolkit(Handlers())


def test_seed_examples_2_and_3(pkg: Any, tk: Any) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "what time is it?"}]}],
        "tools": tk.to_gemini(),
    }
    assert len(body["tools"]) == 1
    assert "now" in [d["name"] for d in body["tools"][0]["functionDeclarations"]]
    part = {"functionCall": {"name": "get_weather", "args": {"city": "Chennai"}}}
    call = part["functionCall"]
    r = asyncio.run(tk.execute(call["name"], call["args"], pkg.ToolContext()))
    assert (r.output, r.is_error) == ("Chennai: 21C, clear", False)
    reply = tk.gemini_reply([part])
    assert reply == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "get_weather",
                    "response": {"output": "Chennai: 21C, clear"},
                }
            }
        ],
    }


def test_to_functions_return_fresh_copies(pkg: Any, tk: Any) -> None:
    for target in ("gemini", "openai", "openai_responses", "anthropic", "mcp", "bedrock"):
        first = getattr(pkg, f"to_{target}")()
        assert first == getattr(tk, f"to_{target}")()
        first.clear() if isinstance(first, (list, dict)) else None
        assert getattr(pkg, f"to_{target}")(), target
    assert [t["name"] for t in pkg.tool_definitions()] == sorted(
        t.removesuffix(".yaml") for t in SPECS
    )
    assert list(pkg.TOOLS) == sorted(pkg.TOOLS)


def test_errors_are_results_never_exceptions(tk: Any) -> None:
    unknown = tk.execute_sync("get_wether", {"city": "x"})
    assert unknown.is_error and "Unknown tool 'get_wether'" in unknown.output
    assert "get_weather" in unknown.output and "forecast" in unknown.output
    missing = tk.execute_sync("get_weather", {})
    assert missing.is_error and "city" in missing.output and "required" in missing.output
    bad_value = tk.execute_sync("forecast", {"city": "x", "days": 9})
    assert bad_value.is_error and "days" in bad_value.output
    not_json = tk.execute_sync("get_weather", '{"city": ')
    assert not_json.is_error and "not valid JSON" in not_json.output
    not_object = tk.execute_sync("get_weather", [1, 2])
    assert not_object.is_error
    raised = tk.execute_sync("boom", {})
    assert raised.is_error and "RuntimeError: disk on fire" in raised.output
    assert asyncio.run(tk.execute("boom", None)).is_error


def test_json_string_arguments_and_aliases(tk: Any) -> None:
    result = tk.execute_sync("forecast", json.dumps({"city": "Pune", "from": "today"}))
    assert not result.is_error
    assert result.data == {
        "city": "Pune",
        "days": 3,
        "units": "c",
        "from": "today",
        "call": None,
        "provider": None,
        "tool": None,
    }
    assert json.loads(result.output) == result.data


def test_pydantic_model_output_is_structured(pkg: Any) -> None:
    class Out(BaseModel):
        temp: float

    class Handlers(pkg.ToolHandlers):  # type: ignore[name-defined,misc]
        def get_weather(self, args: Any, ctx: Any) -> Out:
            return Out(temp=21.5)

        def now(self, args: Any, ctx: Any) -> None:
            return None

        forecast = slow = boom = now

    tk = pkg.Toolkit(Handlers())
    result = tk.execute_sync("get_weather", {"city": "x"})
    assert (result.output, result.data, result.is_error) == (
        '{"temp": 21.5}',
        {"temp": 21.5},
        False,
    )


def test_missing_handler_is_named_at_toolkit(pkg: Any) -> None:
    class Partial(pkg.ToolHandlers):  # type: ignore[name-defined,misc]
        def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

    handlers = Partial()  # constructing the handlers is fine; the Toolkit refuses them
    with pytest.raises(TypeError, match="boom, forecast, get_weather, slow"):
        pkg.Toolkit(handlers)


def test_timeout_is_an_error_result(tk: Any) -> None:
    result = asyncio.run(tk.execute("slow", {"seconds": 5}, timeout=0.05))
    assert result.is_error and "did not finish within 0.05 seconds" in result.output
    assert tk.execute_sync("slow", {"seconds": 5}, timeout=0.05).is_error
    assert tk.execute_sync("slow", {"seconds": 0.01}, timeout=2).output == "slept 0.01"


def test_enum_default_is_member_and_no_args_model_is_empty(pkg: Any) -> None:
    args = pkg.ForecastArgs.model_validate({"city": "x"})
    assert args.units is type(args.units).c
    assert pkg.NowArgs.model_fields == {}


def test_round_trips_run_concurrently_and_answer_in_call_order(tk: Any) -> None:
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "slow", "arguments": json.dumps({"seconds": seconds})},
        }
        for i, seconds in enumerate([0.3, 0.2, 0.1])
    ]
    messages = tk.openai_tool_messages({"role": "assistant", "tool_calls": calls})
    assert tk.handlers.finished == [
        "call_2",
        "call_1",
        "call_0",
    ]  # run together: the shortest ends first
    assert [m["tool_call_id"] for m in messages] == ["call_0", "call_1", "call_2"]
    assert [m["content"] for m in messages] == ["slept 0.3", "slept 0.2", "slept 0.1"]


def test_gemini_round_trip_echoes_id_and_sets_context(tk: Any) -> None:
    parts = [
        {"text": "thinking"},
        {
            "functionCall": {"id": "g1", "name": "forecast", "args": {"city": "Oslo"}},
            "thoughtSignature": "c2ln",
        },
        {"functionCall": {"name": "nope", "args": {}}},
    ]
    reply = tk.gemini_reply(parts)
    first, second = (p["functionResponse"] for p in reply["parts"])
    assert first["id"] == "g1" and first["response"]["output"]["call"] == "g1"
    assert (
        first["response"]["output"]["provider"] == "gemini"
        and first["response"]["output"]["tool"] == "forecast"
    )
    assert "id" not in second and "Unknown tool 'nope'" in second["response"]["error"]


def test_round_trips_accept_official_sdk_objects(tk: Any) -> None:
    from anthropic.types import Message
    from google.genai import types as gtypes
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

    completion = ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_a",
                                "type": "function",
                                "function": {
                                    "name": "get_weather",
                                    "arguments": '{"city": "Rome"}',
                                },
                            }
                        ],
                    },
                }
            ],
        }
    )
    assert tk.openai_tool_messages(completion) == [
        {"role": "tool", "tool_call_id": "call_a", "content": "Rome: 21C, clear"}
    ]
    assert tk.openai_tool_messages(completion.choices[0].message)[0]["tool_call_id"] == "call_a"

    response = Response.model_validate(
        {
            "id": "r",
            "object": "response",
            "created_at": 0,
            "model": "m",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "function_call",
                    "id": "fc",
                    "call_id": "call_r",
                    "name": "now",
                    "arguments": "{}",
                    "status": "completed",
                }
            ],
        }
    )
    assert tk.openai_responses_outputs(response) == [
        {"type": "function_call_output", "call_id": "call_r", "output": "12:00"}
    ]

    message = Message.model_validate(
        {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "boom", "input": {}}],
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    [block] = tk.anthropic_tool_results(message)
    assert block["tool_use_id"] == "toolu_1" and block["is_error"] is True

    gen = gtypes.GenerateContentResponse.model_validate(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {
                                "functionCall": {
                                    "id": "x1",
                                    "name": "get_weather",
                                    "args": {"city": "Lima"},
                                }
                            }
                        ],
                    }
                }
            ]
        }
    )
    reply = tk.gemini_reply(gen)
    assert reply["parts"][0]["functionResponse"] == {
        "id": "x1",
        "name": "get_weather",
        "response": {"output": "Lima: 21C, clear"},
    }
    gtypes.Content.model_validate(reply)  # the reply is a valid google-genai Content


def test_reply_shapes_accepted_by_sdk_types(tk: Any) -> None:
    from anthropic.types import ToolResultBlockParam
    from openai.types.chat import ChatCompletionToolMessageParam
    from openai.types.responses.response_input_item_param import FunctionCallOutput
    from pydantic import TypeAdapter

    [tool_message] = tk.openai_tool_messages(
        {
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "now", "arguments": "{}"}}
            ]
        }
    )
    TypeAdapter(ChatCompletionToolMessageParam).validate_python(tool_message, strict=True)
    [output] = tk.openai_responses_outputs(
        [{"type": "function_call", "call_id": "c", "name": "now", "arguments": "{}"}]
    )
    TypeAdapter(FunctionCallOutput).validate_python(output, strict=True)
    [result] = tk.anthropic_tool_results(
        [{"type": "tool_use", "id": "t", "name": "now", "input": {}}]
    )
    TypeAdapter(ToolResultBlockParam).validate_python(result, strict=True)


def test_bedrock_round_trip_statuses_and_json_blocks(tk: Any) -> None:
    content = [
        {"toolUse": {"toolUseId": "a", "name": "forecast", "input": {"city": "Nice"}}},
        {"toolUse": {"toolUseId": "b", "name": "boom", "input": {}}},
    ]
    ok, failed = tk.bedrock_tool_results({"role": "assistant", "content": content})
    assert (
        ok["toolResult"]["status"] == "success"
        and ok["toolResult"]["content"][0]["json"]["city"] == "Nice"
    )
    assert failed["toolResult"] == {
        "toolUseId": "b",
        "status": "error",
        "content": [{"text": "Tool 'boom' failed: RuntimeError: disk on fire"}],
    }
    import botocore.session
    from botocore.validate import validate_parameters

    shape = (
        botocore.session.get_session()
        .get_service_model("bedrock-runtime")
        .operation_model("Converse")
        .input_shape
    )
    validate_parameters(
        {
            "modelId": "m",
            "toolConfig": tk.to_bedrock(),
            "messages": [
                {"role": "assistant", "content": content},
                {"role": "user", "content": [ok, failed]},
            ],
        },
        shape,
    )


def test_round_trip_inside_running_event_loop(tk: Any) -> None:
    async def inner() -> Any:
        sync_reply = tk.anthropic_tool_results(
            [{"type": "tool_use", "id": "t", "name": "now", "input": {}}]
        )
        async_reply = await tk.aanthropic_tool_results(
            [{"type": "tool_use", "id": "t", "name": "now", "input": {}}]
        )
        return sync_reply, async_reply

    sync_reply, async_reply = asyncio.run(inner())
    assert sync_reply == async_reply and sync_reply[0]["content"] == "12:00"


def test_names_that_lower_to_keywords_build_import_and_run(build_package: Any) -> None:
    # `AS` is a fine method and class name, but its model module cannot be called `as`.
    specs = {f"{name}.yaml": {"description": f"Tool {name}"} for name in ("AS", "If", "Import")}
    pkg = build_package(specs)

    class Handlers(pkg.ToolHandlers):  # type: ignore[misc,name-defined]
        def AS(self, args: Any, ctx: Any) -> str:  # noqa: N802
            return "as"

        def If(self, args: Any, ctx: Any) -> str:  # noqa: N802
            return "if"

        def Import(self, args: Any, ctx: Any) -> str:  # noqa: N802
            return "import"

    tk = pkg.Toolkit(Handlers())
    assert [tk.execute_sync(name, {}).output for name in ("AS", "If", "Import")] == [
        "as",
        "if",
        "import",
    ]
