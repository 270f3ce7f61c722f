"""LlamaIndex: tools whose `fn_schema` is the generated argument model, sync and async."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..core import ToolContext, ToolkitCore
from ..datatypes import ToolResult
from ._common import SOURCE, images, models, text


def llama_index_tools(toolkit: ToolkitCore[Any], *, toolset: str | None = None) -> list[Any]:
    """A list of LlamaIndex tools (`AsyncBaseTool`s, `call` and `acall`):
    `FunctionAgent(tools=llama_index_tools(tk), llm=...)` (`toolset=`: only that toolset's tools).

    `metadata.fn_schema` is the generated argument model, and the parameters LlamaIndex sends a
    model (`metadata.get_parameters_dict()`, `to_openai_tool()`) are the checked-in OpenAI
    definition's, exactly (LlamaIndex would otherwise rebuild them from the model, dropping
    `additionalProperties`). Every call goes through `Toolkit.execute`; the answer is a
    `ToolOutput`: an error result with `is_error=True` and the toolkit's message (the model
    reads it as the tool's answer and can correct the call), else text and image blocks, with
    the structured value as `raw_output` and as JSON text."""
    from llama_index.core.base.llms.types import ImageBlock, TextBlock
    from llama_index.core.tools.types import AsyncBaseTool, ToolMetadata, ToolOutput

    @dataclasses.dataclass
    class CheckedInMetadata(ToolMetadata):  # type: ignore[misc, unused-ignore]
        parameters: dict[str, Any] = dataclasses.field(default_factory=dict)

        def get_parameters_dict(self) -> dict[str, Any]:
            return dict(self.parameters)

    def output(name: str, arguments: dict[str, Any], result: ToolResult) -> Any:
        blocks: list[Any] = [TextBlock(text=text(result))]
        if not result.is_error:
            blocks += [ImageBlock(image=data, image_mimetype=mime) for mime, data in images(result)]
        raw = result.data if result.data is not None and not result.is_error else result.output
        return ToolOutput(
            tool_name=name,
            blocks=blocks,
            raw_input=arguments,
            raw_output=raw,
            is_error=result.is_error,
        )

    class GeneratedTool(AsyncBaseTool):  # type: ignore[misc, unused-ignore]
        def __init__(self, definition: dict[str, Any], model: Any) -> None:
            self._metadata = CheckedInMetadata(
                description=definition["description"],
                name=definition["name"],
                fn_schema=model,
                parameters=definition["parameters"],
            )

        @property
        def metadata(self) -> Any:
            return self._metadata

        def _call(self, args: tuple[Any, ...], keywords: dict[str, Any]) -> tuple[Any, ...]:
            arguments = _arguments(args, keywords)
            name, unaliased = toolkit.unalias(SOURCE, self._metadata.name, arguments)
            return arguments, name, unaliased, ToolContext(tool_name=name, provider="llama_index")

        def call(self, *args: Any, **keywords: Any) -> Any:
            arguments, *call = self._call(args, keywords)
            return output(self._metadata.name, arguments, toolkit.execute_sync(*call))

        async def acall(self, *args: Any, **keywords: Any) -> Any:
            arguments, *call = self._call(args, keywords)
            result = await toolkit.execute(*call, offload=True)
            return output(self._metadata.name, arguments, result)

    return [GeneratedTool(d, model) for d, _, model in models(toolkit, toolset)]


def _arguments(args: tuple[Any, ...], keywords: dict[str, Any]) -> dict[str, Any]:
    # Agents call a tool with keyword arguments; `tool.call({...})` (one dict) works too. A bare
    # value is refused: LlamaIndex's `call_tool` tries one for a one-property tool, then falls
    # back to keywords on this TypeError.
    if len(args) == 1 and not keywords and isinstance(args[0], dict):
        return dict(args[0])
    if args:
        raise TypeError("a generated tool takes keyword arguments (or one dict of them)")
    return keywords
