"""OpenAI Chat Completions: tool calls on the assistant message, one `tool` message per call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import RawCall, ToolResult, get
from ..loops import Conversation, dump, tools_key


class OpenAIChat(Conversation):
    NAME = "openai"

    @staticmethod
    def calls(payload: Any) -> list[RawCall]:
        """The calls of an assistant message (or of a whole ChatCompletion: its first choice)."""
        message = payload
        if get(message, "choices") is not None:
            message = get(get(message, "choices")[0], "message")
        found = []
        for call in get(message, "tool_calls") or ():
            function = get(call, "function")
            if function is not None:
                found.append(
                    RawCall(
                        get(function, "name") or "", get(function, "arguments"), get(call, "id")
                    )
                )
        return found

    @staticmethod
    def replies(calls: Sequence[RawCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": call.call_id, "content": result.output}
            for call, result in zip(calls, results, strict=True)
        ]

    def select(self, schemas: Any, allowed: frozenset[str] | None) -> Any:
        return [t for t in schemas if allowed is None or t["function"]["name"] in allowed]

    def request(self) -> dict[str, Any]:
        return {**self.base_request, "messages": self.history, **tools_key(self.schemas)}

    def absorb(self, response: Any) -> bool:
        message = get(get(response, "choices")[0], "message")
        self.history.append(assistant_message(message))
        return bool(get(message, "tool_calls"))

    def calls_of(self, response: Any) -> Any:
        return get(get(response, "choices")[0], "message")

    def append(self, replies: Any) -> None:
        self.history.extend(replies)


def assistant_message(message: Any) -> dict[str, Any]:
    """The assistant message as a request message (drops response-only fields)."""
    data = dump(message)
    kept: dict[str, Any] = {"role": "assistant", "content": data.get("content")}
    for key in ("refusal", "name", "function_call"):
        if data.get(key) is not None:
            kept[key] = data[key]
    if data.get("audio"):
        kept["audio"] = {"id": data["audio"]["id"]}
    if data.get("tool_calls"):
        kept["tool_calls"] = data["tool_calls"]
    return kept
