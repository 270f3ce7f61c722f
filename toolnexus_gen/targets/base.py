"""What every provider target shares: its name rule, the empty-arguments schema, JSON output."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..bundle import Located
from ..diagnostics import Diagnostic, Severity
from ..ir import Tool
from .transforms import apply

# A tool without arguments, for providers that want a schema anyway: accepted by OpenAI (which
# rejects an object without "properties"), Anthropic, MCP and Bedrock alike.
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def input_schema(tool: Tool, schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    """The schema to emit: the target's effective schema when given, else the bundled one."""
    schema = (schemas or {}).get(tool.name, tool.input_schema)
    return schema if schema is not None else dict(EMPTY_OBJECT)


def effective(
    tool: Tool, options: dict[str, Any], *, must_inline: bool = False, output: bool = False
) -> Located | None:
    """The tool's input (or output) schema as this target will emit it: inlined and transformed
    as configured. Raises Cycle when must_inline and the schema is recursive.
    """
    located = tool.output_located if output else tool.located
    if located is None:
        return None
    return apply(located, tuple(options.get("transforms", ())), must_inline=must_inline)


def dump_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class NameRule:
    pattern: str
    text: str  # the provider's own words
    severity: Severity = Severity.ERROR

    def check(self, tool: Tool, target: str, code: str) -> list[Diagnostic]:
        if re.fullmatch(self.pattern, tool.name):
            return []
        line, col = tool.source.positions.value("/name")
        return [
            Diagnostic(
                tool.source.display,
                line,
                col,
                code,
                f"tool name {tool.name!r} is not valid for target {target}: {self.text} "
                f"(pattern {self.pattern})",
                self.severity,
                target=target,
            )
        ]
