"""Scripted model turns served locally to the official SDK clients (no network).

Each provider's client gets a transport (httpx2.MockTransport, or botocore's Stubber for boto3)
that answers every request with the next scripted response and records the request body, so a
tool loop can run end to end through the real SDK code paths.

A turn is a list of tool calls `(call_id, name, arguments)` or a final text string.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import httpx2

BASE = "http://scripted.invalid"
Call = tuple[str, str, Any]
Turn = Sequence[Call] | str


class Script:
    """Serves `responses` one per request and keeps each request's JSON body in `requests`."""

    def __init__(self, responses: Sequence[dict[str, Any]]) -> None:
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content or b"{}"))
        if not self.responses:
            return httpx2.Response(500, json={"error": {"message": "script exhausted"}})
        return httpx2.Response(200, json=self.responses.pop(0))

    def sync_client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def async_client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self))


def _args_json(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


# -- response bodies, as each provider's API returns them --------------------------------------


def openai_chat(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(turn, str):
        message["content"] = turn
        finish = "stop"
    else:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": _args_json(a)}}
            for i, n, a in turn
        ]
        finish = "tool_calls"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
    }


def openai_responses(turn: Turn) -> dict[str, Any]:
    if isinstance(turn, str):
        output: list[dict[str, Any]] = [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn, "annotations": []}],
            }
        ]
    else:
        output = [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            *(
                {
                    "type": "function_call",
                    "id": f"fc_{i}",
                    "call_id": i,
                    "name": n,
                    "arguments": _args_json(a),
                    "status": "completed",
                }
                for i, n, a in turn
            ),
        ]
    return responses_envelope(output)


def responses_envelope(output: list[dict[str, Any]]) -> dict[str, Any]:
    """A completed Responses API response holding these output items."""
    return {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 0,
        "model": "scripted",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def anthropic(turn: Turn) -> dict[str, Any]:
    if isinstance(turn, str):
        content: list[dict[str, Any]] = [{"type": "text", "text": turn}]
        stop = "end_turn"
    else:
        content = [
            {"type": "thinking", "thinking": "Which tools?", "signature": "sig-abc"},
            *({"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in turn),
        ]
        stop = "tool_use"
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": "scripted",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def gemini(turn: Turn) -> dict[str, Any]:
    if isinstance(turn, str):
        parts: list[dict[str, Any]] = [{"text": turn}]
    else:
        parts = [
            {"functionCall": {"id": i, "name": n, "args": a}, "thoughtSignature": "c2lnLTE="}
            for i, n, a in turn
        ]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}]}


def bedrock(turn: Turn) -> dict[str, Any]:
    if isinstance(turn, str):
        content: list[dict[str, Any]] = [{"text": turn}]
        stop = "end_turn"
    else:
        content = [{"toolUse": {"toolUseId": i, "name": n, "input": a}} for i, n, a in turn]
        stop = "tool_use"
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 1},
    }


SHAPES: dict[str, Callable[[Turn], dict[str, Any]]] = {
    "openai": openai_chat,
    "openai_responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
    "bedrock": bedrock,
}


# -- official clients wired to a script ---------------------------------------------------------


def openai_client(script: Script, *, asynchronous: bool = False) -> Any:
    import openai

    if asynchronous:
        return openai.AsyncOpenAI(
            api_key="scripted", base_url=f"{BASE}/v1", http_client=script.async_client()
        )
    return openai.OpenAI(
        api_key="scripted", base_url=f"{BASE}/v1", http_client=script.sync_client()
    )


def anthropic_client(script: Script, *, asynchronous: bool = False) -> Any:
    import anthropic as sdk

    if asynchronous:
        return sdk.AsyncAnthropic(
            api_key="scripted", base_url=BASE, http_client=script.async_client()
        )
    return sdk.Anthropic(api_key="scripted", base_url=BASE, http_client=script.sync_client())


def gemini_client(script: Script) -> Any:
    from google import genai
    from google.genai import types

    options = types.HttpOptions(
        base_url=BASE,
        httpx_client=script.sync_client(),
        httpx_async_client=script.async_client(),
    )
    return genai.Client(api_key="scripted", http_options=options)


def bedrock_client(turns: Sequence[Turn]) -> tuple[Any, Any]:
    """A boto3 bedrock-runtime client whose Converse answers come from `turns` (via Stubber).

    The Stubber validates every request against the Converse API model, as boto3 would.
    """
    import boto3
    from botocore.stub import Stubber

    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="scripted",
        aws_secret_access_key="scripted",
    )
    stubber = Stubber(client)
    for turn in turns:
        stubber.add_response("converse", bedrock(turn))
    stubber.activate()
    return client, stubber


def client_for(provider: str, turns: Sequence[Turn], *, asynchronous: bool = False) -> Any:
    """The official client for `provider`, answering with `turns`, and what records requests."""
    if provider == "bedrock":
        return bedrock_client(turns)
    script = Script([SHAPES[provider](turn) for turn in turns])
    if provider in ("openai", "openai_responses"):
        return openai_client(script, asynchronous=asynchronous), script
    if provider == "anthropic":
        return anthropic_client(script, asynchronous=asynchronous), script
    return gemini_client(script), script
