"""What every framework adapter shares: the checked-in definitions a framework is given (only a
toolset's when one is named), in the form each provider file holds them, and a result's parts."""

from __future__ import annotations

import json
from typing import Any

from ..content import Image, Resource
from ..core import ToolkitCore
from ..datatypes import ToolResult
from ..toolsets import subset

SOURCE = "openai_responses"  # the provider file whose tool definitions the frameworks get


def definitions(toolkit: ToolkitCore[Any], toolset: str | None = None) -> list[dict[str, Any]]:
    """Each tool as the OpenAI Responses file has it: name, description, parameters, strict
    (the neutral JSON Schema form, with the strict flag the spec chose); only a toolset's when
    one is named."""
    chosen = toolkit._tool_subset(None, toolset)
    try:
        tools = toolkit._provider_schema(SOURCE)
        if chosen is not None:
            sent = toolkit.sent_names(SOURCE)
            tools = subset(SOURCE, tools, {sent.get(n, n) for n in chosen})
    except NotImplementedError:
        tools = [
            {**t, "parameters": t.get("input_schema") or {"type": "object", "properties": {}}}
            for t in toolkit._provider_schema("tools")
            if chosen is None or t["name"] in chosen
        ]
    tools = [t for t in tools if t.get("type", "function") == "function"]  # not hosted tools
    return [
        {
            "name": t["name"],
            "description": t.get("description", ""),
            "parameters": t["parameters"],
            "strict": bool(t.get("strict", False)),
        }
        for t in tools
    ]


def models(
    toolkit: ToolkitCore[Any], toolset: str | None = None
) -> list[tuple[dict[str, Any], str, Any]]:
    """(definition, the spec's tool name, its generated argument model) of each tool, for the
    frameworks that take a pydantic model; the definition's name is the one the OpenAI file
    gives the tool (an alias where the spec's is not a valid function name)."""
    return [
        (d, name, toolkit.tools[name].model)
        for d in definitions(toolkit, toolset)
        for name in [toolkit.unalias(SOURCE, d["name"], {})[0]]
    ]


def declarations(
    toolkit: ToolkitCore[Any], target: str, toolset: str | None
) -> list[dict[str, Any]]:
    """The function entries of a provider file exactly as checked in: Gemini's
    `functionDeclarations` (target "gemini") or Bedrock's `toolSpec`s ("bedrock"); only a
    toolset's when one is named, hosted tools left out."""
    chosen = toolkit._tool_subset(None, toolset)
    tools = toolkit._provider_schema(target)
    if chosen is not None:
        sent = toolkit.sent_names(target)
        tools = subset(target, tools, {sent.get(n, n) for n in chosen})
    if target == "gemini":
        return [d for wrapper in tools for d in wrapper.get("functionDeclarations", ())]
    if target == "bedrock":
        entries = tools["tools"] if isinstance(tools, dict) else tools
        return [entry["toolSpec"] for entry in entries if "toolSpec" in entry]
    raise ValueError(f"no declarations for {target}")


def images(result: ToolResult) -> list[tuple[str, bytes]]:
    """(MIME type, bytes) of each image (and each image resource) a result holds."""
    found = []
    for part in result.content:
        if isinstance(part, Image):
            found.append((part.mime_type, part.data))
        elif (
            isinstance(part, Resource)
            and part.blob is not None
            and (part.mime_type or "").startswith("image/")
        ):
            found.append((part.mime_type or "", part.blob))
    return found


def text(result: ToolResult) -> str:
    """The text a framework that carries text only gives the model: the structured value as
    JSON when there is one, else the output."""
    if not result.is_error and result.data is not None and not isinstance(result.data, str):
        return json.dumps(result.data, ensure_ascii=False, default=str)
    return result.output
