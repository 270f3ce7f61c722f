"""AutoGen (autogen-core / autogen-agentchat): `BaseTool`s whose `schema` is the checked-in OpenAI
definition, `strict` included."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Mapping
from typing import Any

from ..core import ToolContext, ToolkitCore
from ..datatypes import ToolError
from ._common import SOURCE, models


def autogen_tools(toolkit: ToolkitCore[Any], *, toolset: str | None = None) -> list[Any]:
    """A list of AutoGen tools: `AssistantAgent(..., tools=autogen_tools(tk))` (`toolset=`: only
    that toolset's tools).

    `schema` is the checked-in `openai_responses.json` definition (name, description,
    parameters, `strict`), not AutoGen's own, which is rebuilt from the argument model with
    titles added; `args_type` is the generated argument model. `run_json` goes straight to
    `Toolkit.execute` (the toolkit validates) with AutoGen's `call_id` as `ToolContext.call_id`;
    cancelling the `CancellationToken` cancels the call (an async handler sees
    `CancelledError`). An error result is raised as `ToolError`, which AutoGen's workbench turns
    into a `FunctionExecutionResult` with `is_error=True` and exactly the toolkit's message, for
    the model to correct. A structured result is returned as the value and reaches the model as
    JSON text; images as their description (an AutoGen tool's result is text)."""
    from autogen_core import CancellationToken
    from autogen_core.tools import BaseTool
    from pydantic import BaseModel

    class GeneratedTool(BaseTool[BaseModel, BaseModel]):  # type: ignore[misc, unused-ignore]
        def __init__(self, definition: dict[str, Any], model: Any) -> None:
            super().__init__(
                args_type=model,
                return_type=BaseModel,
                name=definition["name"],
                description=definition["description"],
                strict=definition["strict"],
            )
            self.definition = definition

        @property
        def schema(self) -> Any:
            return {
                "name": self.definition["name"],
                "description": self.definition["description"],
                "parameters": copy.deepcopy(self.definition["parameters"]),
                "strict": self.definition["strict"],
            }

        async def run(self, args: Any, cancellation_token: Any) -> Any:
            arguments = args.model_dump(mode="json", by_alias=True, exclude_unset=True)
            return await self.run_json(arguments, cancellation_token)

        async def run_json(
            self,
            args: Mapping[str, Any],
            cancellation_token: CancellationToken,
            call_id: str | None = None,
        ) -> Any:
            name, arguments = toolkit.unalias(SOURCE, self.name, dict(args))
            context = ToolContext(call_id=call_id, tool_name=name, provider="autogen")
            call = asyncio.ensure_future(toolkit.execute(name, arguments, context, offload=True))
            cancellation_token.link_future(call)  # cancelling the token cancels the call
            result = await call
            if result.is_error:
                raise ToolError(result.output)
            return result.data if result.data is not None else result.output

        def return_value_as_string(self, value: Any) -> str:
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return [GeneratedTool(d, model) for d, _, model in models(toolkit, toolset)]
