"""The OpenAI Responses API: `function_call` output items, `function_call_output` input items."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..datatypes import RawCall, ToolResult, get
from ..loops import Conversation, dump, tools_key


class OpenAIResponses(Conversation):
    NAME = "openai_responses"

    @staticmethod
    def calls(payload: Any) -> list[RawCall]:
        """The `function_call` items of a response's output (or of the response itself)."""
        items = payload
        if get(items, "output") is not None:
            items = get(items, "output")
        return [
            RawCall(get(item, "name") or "", get(item, "arguments"), get(item, "call_id"))
            for item in items or ()
            if get(item, "type") == "function_call"
        ]

    @staticmethod
    def replies(calls: Sequence[RawCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return [
            {"type": "function_call_output", "call_id": call.call_id, "output": result.output}
            for call, result in zip(calls, results, strict=True)
        ]

    def request(self) -> dict[str, Any]:
        return {**self.base_request, "input": self.history, **tools_key(self.schemas)}

    def absorb(self, response: Any) -> bool:
        # Server-executed items (tool_search_call/_output, web_search_call...) stay as they are.
        items = [dump(item) for item in get(response, "output") or ()]
        self.history.extend(items)
        return any(item.get("type") == "function_call" for item in items)

    def calls_of(self, response: Any) -> Any:
        return get(response, "output")

    def append(self, replies: Any) -> None:
        self.history.extend(replies)
