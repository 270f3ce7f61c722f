"""Gemini (google-genai): `functionCall` parts, answered by `functionResponse` parts in a `user`
content, matched by name and echoing the call's `id` when Gemini sent one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..datatypes import RawCall, ToolResult, get
from ..loops import Conversation, tools_key


def _parts(payload: Any) -> Any:
    candidates = get(payload, "candidates")
    if candidates:
        payload = get(candidates[0], "content")
    if not isinstance(payload, (list, tuple)) and get(payload, "parts") is not None:
        payload = get(payload, "parts")
    return payload or ()


class Gemini(Conversation):
    NAME = "gemini"

    @staticmethod
    def calls(payload: Any) -> list[RawCall]:
        """The functionCall parts of a parts list, a Content, or a whole response."""
        found = []
        for part in _parts(payload):
            call = get(part, "functionCall", "function_call")
            if call is not None:
                found.append(RawCall(get(call, "name") or "", get(call, "args"), get(call, "id")))
        return found

    @staticmethod
    def replies(calls: Sequence[RawCall], results: Sequence[ToolResult]) -> dict[str, Any]:
        parts = []
        for call, result in zip(calls, results, strict=True):
            response: dict[str, Any] = {"name": call.name}
            if call.call_id is not None:  # Gemini 3 always sends one; echo it back
                response = {"id": str(call.call_id), "name": call.name}
            if result.is_error:
                response["response"] = {"error": result.output}
            else:
                output = result.data if result.data is not None else result.output
                response["response"] = {"output": output}
            parts.append({"functionResponse": response})
        return {"role": "user", "parts": parts}

    def request(self) -> dict[str, Any]:
        request = dict(self.base_request)
        config = request.get("config")
        if config is None:
            config = {}
        elif hasattr(config, "model_dump"):
            config = config.model_dump(exclude_none=True)
        else:
            config = dict(config)
        config.update(tools_key([*(config.get("tools") or ()), *self.schemas]))
        # The loop runs the tools; the SDK must not try to.
        config.setdefault("automatic_function_calling", {"disable": True})
        if any("functionDeclarations" not in tool for tool in self.schemas):
            # Built-in tools beside functions: Gemini 3 wants their invocations in the reply
            # (kept in the history, never dispatched here).
            tool_config = config.get("tool_config") or {}
            if hasattr(tool_config, "model_dump"):
                tool_config = tool_config.model_dump(exclude_none=True)
            config["tool_config"] = {"include_server_side_tool_invocations": True, **tool_config}
        request["config"] = config
        request["contents"] = self.history
        return request

    def absorb(self, response: Any) -> bool:
        candidates = get(response, "candidates")
        content = get(candidates[0], "content") if candidates else None
        if content is None:
            return False
        if hasattr(content, "model_dump"):
            # Python mode keeps thoughtSignature as bytes, which the SDK sends back intact.
            content = content.model_dump(by_alias=True, exclude_none=True)
        self.history.append(content)
        return any(get(part, "functionCall") for part in get(content, "parts") or ())

    def calls_of(self, response: Any) -> Any:
        # The model turn (with any thoughtSignature) is already in the history, unchanged.
        return self.history[-1]

    def append(self, replies: Any) -> None:
        self.history.append(replies)


def contents(value: Any) -> list[Any]:
    """The caller's contents as a new list (a single string becomes one user turn)."""
    if isinstance(value, str):
        return [{"role": "user", "parts": [{"text": value}]}]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]
