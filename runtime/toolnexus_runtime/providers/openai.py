"""OpenAI Chat Completions: tool calls on the assistant message, one `tool` message per call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core import RawCall, ToolResult, get
from ..loops import Conversation, dump, plain, tools_key


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
        if not self.raw:  # not the official SDK: the arguments as documented
            return {**self.base_request, "messages": self.history, **tools_key(self.schemas)}
        # The official SDK walks `messages` and `tools` through its typed-parameter transform on
        # every call (each message against every message type: most of a turn's cost, growing
        # with the history), which changes nothing in JSON values. So they go in extra_body,
        # which it sends as given and which takes precedence over the named parameters (the
        # caller's own extra_body keys still win). The body is the same (tested).
        body = {"messages": self.history, **tools_key(self.schemas)}
        extra = self.base_request.get("extra_body")
        if extra:
            body.update(extra)
        return {**self.base_request, "messages": [], "extra_body": body}

    def sender(self, create: Callable[..., Any]) -> tuple[Callable[..., Any], bool]:
        # The official SDK's `completions.create`: the same request through `with_raw_response`,
        # so a turn that calls tools is read from its JSON, and the SDK builds its
        # ChatCompletion for the final turn only.
        raw = getattr(getattr(create, "__self__", None), "with_raw_response", None)
        if raw is None or getattr(create, "__name__", None) != "create":
            return create, False
        # JSON values from here on (a message object the caller passed is dumped once, as the
        # SDK would dump it), so the history can go in extra_body (see request()).
        self.history = plain(self.history)
        return raw.create, True

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
