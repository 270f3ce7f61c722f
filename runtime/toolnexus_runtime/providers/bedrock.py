"""Bedrock Converse (boto3): `toolUse` blocks, answered by `toolResult` blocks with `status`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..content import (
    Audio,
    Resource,
    Text,
    describe,
    file_name,
    has_media,
    image_of,
    in_words,
    unsent,
)
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


PROVIDER = "Bedrock"
IMAGES = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
DOCUMENTS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}


def _block(result: ToolResult) -> dict[str, Any]:
    if not result.is_error and isinstance(result.data, dict):
        return {"json": result.data}
    # Bedrock rejects empty text blocks.
    return {"text": result.output or "(no output)"}


def _document_name(part: Resource, taken: set[str]) -> str:
    """A document name Bedrock takes (letters, digits, single spaces, hyphens, parentheses,
    square brackets; at most 200 characters), unique within the reply."""
    stem = re.sub(r"[^A-Za-z0-9()\[\]-]+", " ", file_name(part)).strip()[:180] or "document"
    name, n = stem, 1
    while name in taken:
        n += 1
        name = f"{stem} ({n})"
    taken.add(name)
    return name


def _blocks(tool: str, result: ToolResult) -> list[dict[str, Any]]:
    """The toolResult content: one block, or, when the result holds more than text, a block
    per part (its structured value as one json block in place of its text parts)."""
    if result.is_error or not has_media(result.content):
        return [_block(result)]
    blocks: list[dict[str, Any]] = []
    if isinstance(result.data, dict):
        blocks.append({"json": result.data})
    names: set[str] = set()
    for part in result.content:
        image = image_of(part)
        if image is not None and image[0] in IMAGES:
            blocks.append({"image": {"format": IMAGES[image[0]], "source": {"bytes": image[1]}}})
        elif isinstance(part, Resource) and part.blob is not None and part.mime_type in DOCUMENTS:
            document = {
                "format": DOCUMENTS[part.mime_type],
                "name": _document_name(part, names),
                "source": {"bytes": part.blob},
            }
            blocks.append({"document": document})
        elif in_words(part):
            text = describe(part)
            if text and not (isinstance(part, Text) and isinstance(result.data, dict)):
                blocks.append({"text": text})  # (text parts copy the json block)
        else:
            why = "it takes no audio" if isinstance(part, Audio) else "it takes no such file"
            if image is not None:
                why = f"it takes no {image[0]} images"
            blocks.append({"text": unsent(tool, part, PROVIDER, why)})
    return blocks or [{"text": "(no output)"}]


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
                    "content": _blocks(call.name, result),
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
