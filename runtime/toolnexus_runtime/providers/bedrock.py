"""Bedrock Converse (boto3): `toolUse` blocks, answered by `toolResult` blocks with `status`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..datatypes import RawCall, ToolResult, get
from ..loops import Conversation
from ..toolsets import subset


def _content(payload: Any) -> Any:
    output = get(payload, "output")
    if output is not None:
        payload = get(output, "message")
    if not isinstance(payload, (list, tuple)) and get(payload, "content") is not None:
        payload = get(payload, "content")
    return payload or ()


def _block(result: ToolResult) -> dict[str, Any]:
    if not result.is_error and isinstance(result.data, dict):
        return {"json": result.data}
    # Bedrock rejects empty text blocks.
    return {"text": result.output or "(no output)"}


class Bedrock(Conversation):
    NAME = "bedrock"

    @staticmethod
    def calls(payload: Any) -> list[RawCall]:
        """The toolUse blocks of a content list, a message, or a whole converse response."""
        found = []
        for block in _content(payload):
            use = get(block, "toolUse")
            if use is not None:
                found.append(
                    RawCall(get(use, "name") or "", get(use, "input"), get(use, "toolUseId"))
                )
        return found

    @staticmethod
    def replies(calls: Sequence[RawCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return [
            {
                "toolResult": {
                    "toolUseId": call.call_id,
                    "content": [_block(result)],
                    "status": "error" if result.is_error else "success",
                }
            }
            for call, result in zip(calls, results, strict=True)
        ]

    def select(self, schemas: Any, allowed: frozenset[str] | None) -> Any:
        tools = subset(self.NAME, schemas, allowed)
        return list(tools["tools"] if isinstance(tools, dict) else tools)

    def request(self) -> dict[str, Any]:
        request = dict(self.base_request)
        tool_config = dict(request.get("toolConfig") or {})
        # Sent on every request: Bedrock rejects a history holding tool blocks without it.
        tool_config["tools"] = [*(tool_config.get("tools") or ()), *self.schemas]
        if tool_config["tools"]:  # Bedrock rejects a toolConfig without tools
            request["toolConfig"] = tool_config
        request["messages"] = self.history
        return request

    def absorb(self, response: Any) -> bool:
        message = response["output"]["message"]
        self.history.append(message)
        return any("toolUse" in block for block in message.get("content") or ())

    def calls_of(self, response: Any) -> Any:
        return response

    def append(self, replies: Any) -> None:
        self.history.append({"role": "user", "content": replies})


def messages(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"role": "user", "content": [{"text": value}]}]
    return list(value)
