"""smolagents: `Tool`s whose `inputs` and `output_type` come from the spec."""

from __future__ import annotations

from typing import Any

from ..core import ToolContext, ToolkitCore
from ..datatypes import ToolError
from ._common import SOURCE, definitions

# JSON Schema types smolagents names the same way (it also has image, audio and any).
TYPES = frozenset({"string", "boolean", "integer", "number", "array", "object", "null"})


def smolagents_inputs(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """smolagents `inputs` for an object schema: each property's type (a list of types kept,
    `null` in it becoming `nullable`), description, enum and nullable; a property the schema
    does not require is nullable too (smolagents insists on every other one); a property
    whose type smolagents cannot name (`anyOf`, `$ref`) is `any`, and the toolkit validates
    it."""
    required = set(schema.get("required", ()))
    inputs = {}
    for name, prop in (schema.get("properties") or {}).items():
        declared = prop.get("type") if isinstance(prop, dict) else None
        types = [declared] if isinstance(declared, str) else list(declared or [])
        nullable = "null" in types or name not in required
        types = [t for t in types if t != "null"]
        entry: dict[str, Any] = {
            "type": (types[0] if len(types) == 1 else types)
            if types and TYPES >= set(types)
            else "any",
            "description": prop.get("description", "") if isinstance(prop, dict) else "",
        }
        if isinstance(prop, dict) and "enum" in prop:
            entry["enum"] = list(prop["enum"])
        if nullable:
            entry["nullable"] = True
        inputs[name] = entry
    return inputs


def smolagents_tools(toolkit: ToolkitCore[Any], *, toolset: str | None = None) -> list[Any]:
    """A list of smolagents `Tool`s: `ToolCallingAgent(tools=smolagents_tools(tk), model=...)` or
    a `CodeAgent` (`toolset=`: only that toolset's tools).

    `inputs` come from the checked-in OpenAI definition's parameters (see `smolagents_inputs`:
    descriptions, enums and nullable kept), `output_type` from the spec's output schema
    (`object` for a structured result, which the tool returns as the value itself; else
    `string`, the result's text, images as their description). smolagents checks the
    arguments against `inputs` first; the toolkit then validates them with the generated model
    and an error result is raised as `ToolError`, which smolagents reports to the model as the
    step's error, to be corrected on the next step."""
    from smolagents import Tool

    outputs = {
        t["name"]: t.get("output_schema")
        for t in toolkit._provider_schema("tools")
        if isinstance(t, dict) and "name" in t
    }

    class GeneratedTool(Tool):  # type: ignore[misc, unused-ignore]
        skip_forward_signature_validation = True

        def __init__(self, definition: dict[str, Any]) -> None:
            self.name = definition["name"]
            self.description = definition["description"]
            self.inputs = smolagents_inputs(definition["parameters"])
            self.spec_name = toolkit.unalias(SOURCE, definition["name"], {})[0]
            output = outputs.get(self.spec_name)
            self.output_schema = output
            self.output_type = output.get("type", "object") if output else "string"
            if self.output_type not in TYPES:
                self.output_type = "any"
            super().__init__()

        def forward(self, **arguments: Any) -> Any:
            name, arguments = toolkit.unalias(SOURCE, self.name, arguments)
            context = ToolContext(tool_name=name, provider="smolagents")
            result = toolkit.execute_sync(name, arguments, context)
            if result.is_error:
                raise ToolError(result.output)
            if self.output_schema is not None and result.data is not None:
                return result.data
            return result.output

    return [GeneratedTool(d) for d in definitions(toolkit, toolset)]
