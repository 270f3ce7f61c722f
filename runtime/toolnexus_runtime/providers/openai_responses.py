"""The OpenAI Responses API: `function_call` output items, `function_call_output` input items."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..content import (
    WEB_IMAGES,
    Audio,
    Part,
    Resource,
    data_url,
    describe,
    file_name,
    has_media,
    image_of,
    unsent,
)
from ..datatypes import RawCall, ToolResult, get
from ..loops import Conversation, dump, tools_key

PROVIDER = "OpenAI Responses"
# What input_file takes as file_data (the Responses API extracts their text; a PDF's pages too).
FILES = ("application/pdf", "text/", "application/json", "application/msword")
OFFICE = "application/vnd.openxmlformats-officedocument."


def _item(tool: str, part: Part) -> dict[str, Any]:
    """A function_call_output content item for one part (input_text, input_image, input_file)."""
    image = image_of(part)
    if image is not None:
        if image[0] in WEB_IMAGES:
            return {"type": "input_image", "image_url": data_url(*image)}
        text = unsent(tool, part, PROVIDER, f"it takes no {image[0]} images")
    elif isinstance(part, Resource) and part.blob is not None:
        mime = part.mime_type or ""
        if mime.startswith(FILES) or mime.startswith(OFFICE):
            return {
                "type": "input_file",
                "file_data": data_url(mime, part.blob),
                "filename": file_name(part),
            }
        text = unsent(tool, part, PROVIDER, f"it takes no {mime or 'untyped'} files")
    elif isinstance(part, Audio):
        text = unsent(tool, part, PROVIDER, "function call outputs carry no audio")
    else:  # text, a text resource, a resource link: the words are all of it
        text = describe(part)
    return {"type": "input_text", "text": text}


def _output(tool: str, result: ToolResult) -> str | list[dict[str, Any]]:
    """The function_call_output's output: the text, or items when the result has more."""
    if result.is_error or not has_media(result.content):
        return result.output
    return [_item(tool, part) for part in result.content]


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
            {
                "type": "function_call_output",
                "call_id": call.call_id,
                "output": _output(call.name, result),
            }
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
