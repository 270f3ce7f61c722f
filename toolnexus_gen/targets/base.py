"""What every provider target shares: its name rule, the empty-arguments schema, JSON output."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic, Severity
from ..ir import Tool

# A tool without arguments, for providers that want a schema anyway: accepted by OpenAI (which
# rejects an object without "properties"), Anthropic, MCP and Bedrock alike.
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def input_schema(tool: Tool) -> dict[str, Any]:
    return tool.input_schema if tool.input_schema is not None else dict(EMPTY_OBJECT)


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
