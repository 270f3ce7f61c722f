"""Anthropic Messages: `tool_use` blocks, answered by `tool_result` blocks with `is_error`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..datatypes import RawCall, ToolResult, get
from ..loops import Conversation, dump, tools_key


class Anthropic(Conversation):
    NAME = "anthropic"

    @staticmethod
    def calls(payload: Any) -> list[RawCall]:
        """The `tool_use` blocks of a content list (or of a whole Message)."""
        content = payload
        if not isinstance(content, (list, tuple)) and get(content, "content") is not None:
            content = get(content, "content")
        return [
            RawCall(get(block, "name") or "", get(block, "input"), get(block, "id"))
            for block in content or ()
            if get(block, "type") == "tool_use"
        ]

    @staticmethod
    def replies(calls: Sequence[RawCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return [
            {
                "type": "tool_result",
                "tool_use_id": call.call_id,
                "content": result.output,
                "is_error": result.is_error,
            }
            for call, result in zip(calls, results, strict=True)
        ]

    def request(self) -> dict[str, Any]:
        return {**self.base_request, "messages": self.history, **tools_key(self.schemas)}

    def absorb(self, response: Any) -> bool:
        # Server tool blocks (server_tool_use, web_search_tool_result, tool_search_tool_result)
        # stay in the history as sent; only tool_use blocks are dispatched.
        blocks = [dump(block) for block in get(response, "content") or ()]
        self.history.append({"role": "assistant", "content": blocks})
        if get(response, "stop_reason") == "pause_turn":  # a long server tool turn: send again
            return True
        return any(block.get("type") == "tool_use" for block in blocks)

    def calls_of(self, response: Any) -> Any:
        return get(response, "content")

    def append(self, replies: Any) -> None:
        # tool_result blocks come first in the next user message (here: they are all of it).
        if replies:  # none after a paused turn: the assistant turn is sent back as it is
            self.history.append({"role": "user", "content": replies})
