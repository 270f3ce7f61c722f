"""Anthropic Messages: `tool_use` blocks, answered by `tool_result` blocks with `is_error`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..content import WEB_IMAGES, Audio, Part, Resource, b64, describe, has_media, image_of, unsent
from ..datatypes import RawCall, ToolResult, get
from ..loops import Conversation, dump, tools_key

PROVIDER = "Anthropic"


def _block(tool: str, part: Part) -> dict[str, Any] | None:
    """A tool_result content block for one part (text, image or document blocks)."""
    image = image_of(part)
    if image is not None:
        if image[0] in WEB_IMAGES:
            source = {"type": "base64", "media_type": image[0], "data": b64(image[1])}
            return {"type": "image", "source": source}
        text = unsent(tool, part, PROVIDER, f"it takes no {image[0]} images")
    elif isinstance(part, Resource) and part.blob is not None:
        if part.mime_type == "application/pdf":
            source = {"type": "base64", "media_type": "application/pdf", "data": b64(part.blob)}
            return {"type": "document", "source": source}
        text = unsent(tool, part, PROVIDER, "it takes no documents but PDF and text")
    elif isinstance(part, Audio):
        text = unsent(tool, part, PROVIDER, "it takes no audio")
    else:  # text, a text resource, a resource link: the words are all of it
        text = describe(part)
    return {"type": "text", "text": text} if text else None  # it refuses empty text blocks


def _content(tool: str, result: ToolResult) -> str | list[dict[str, Any]]:
    """The tool_result content: the text, or blocks when the result has more than text."""
    if result.is_error or not has_media(result.content):
        return result.output
    return [block for part in result.content if (block := _block(tool, part)) is not None]


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
                "content": _content(call.name, result),
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
